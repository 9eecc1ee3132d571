/**
 * `npm run bench:cli [-- --rounds=N]`: how long one `sms-admin --help` takes by each way of calling
 * it, the ways interleaved round by round (the machine's load moves), the median of each printed
 * with its ratio to a bare start of the project's Node. `--help` reaches no service: what is
 * measured is the start of the command itself.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { round } from "./stats.ts"

const root = join(import.meta.dirname, "..")
const projectNode = join(root, "node_modules/.bin/node")
const systemNode = ["/usr/bin/node", "/usr/local/bin/node"].find(existsSync)
const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice("--rounds=".length) ?? 10)
const cache = mkdtempSync(join(tmpdir(), "sms-cli-cache-"))

// npm sets npm_* variables for the script running this; the ways below start npm afresh
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")))

interface Way {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env?: Record<string, string>
}

const ways: ReadonlyArray<Way> = [
  { name: "bare start of the project's Node (`node -e 0`, baseline)", command: projectNode, args: ["-e", "0"] },
  {
    name: "`node_modules/.bin/node src/admin/cli/main.ts`, no compile cache",
    command: projectNode,
    args: ["src/admin/cli/main.ts"],
    env: { NODE_DISABLE_COMPILE_CACHE: "1" }
  },
  {
    name: "`node_modules/.bin/node bin/sms-admin.mjs` (launcher, compile cache)",
    command: projectNode,
    args: ["bin/sms-admin.mjs"],
    env: { NODE_COMPILE_CACHE: cache }
  },
  ...(systemNode === undefined
    ? []
    : [
        {
          name: `\`bin/sms-admin.mjs\` on the system's Node ${spawnSync(systemNode, ["--version"], { encoding: "utf8" }).stdout.trim()} (starts the project's)`,
          command: systemNode,
          args: ["bin/sms-admin.mjs"],
          env: { NODE_COMPILE_CACHE: cache }
        }
      ]),
  {
    name: "`npm run admin --`",
    command: "npm",
    args: ["run", "--silent", "admin", "--"],
    env: { NODE_COMPILE_CACHE: cache }
  },
  { name: "`npx sms-admin`", command: "npx", args: ["sms-admin"], env: { NODE_COMPILE_CACHE: cache } }
]

const once = (way: Way): number => {
  const started = performance.now()
  const run = spawnSync(way.command, [...way.args, "--help"], {
    cwd: root,
    env: { ...env, ...way.env },
    encoding: "utf8"
  })
  const ms = performance.now() - started
  if (run.status !== 0) throw new Error(`${way.name}: exit ${run.status}: ${run.stderr}`)
  if (way.args[0] !== "-e" && !run.stdout.includes("sms-admin <subcommand>"))
    throw new Error(`${way.name}: no help printed`)
  return ms
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

try {
  const loadStart = loadavg()[0]!
  for (const way of ways) once(way) // warm the compile cache and the file system
  const times = ways.map(() => [] as Array<number>)
  for (let r = 0; r < rounds; r++) for (const [i, way] of ways.entries()) times[i]!.push(once(way))
  const medians = times.map(median)
  process.stdout.write(
    `sms-admin --help, median of ${rounds} interleaved rounds (load ${round(loadStart, 1)} -> ${round(loadavg()[0]!, 1)})\n`
  )
  process.stdout.write("| way | ms | ratio to a bare start |\n|---|---:|---:|\n")
  for (const [i, way] of ways.entries())
    process.stdout.write(`| ${way.name} | ${Math.round(medians[i]!)} | ${round(medians[i]! / medians[0]!, 1)} |\n`)
} finally {
  rmSync(cache, { recursive: true, force: true })
}
