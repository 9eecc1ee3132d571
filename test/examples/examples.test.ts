/**
 * The client as an integrator gets it: `npm pack` in client/ (its prepack builds JavaScript and
 * declarations), the tarball installed into a copy of examples/ in a temporary directory (effect
 * and @types/node from the npm registry), the examples type-checked against the installed
 * declarations, then run with Node 22 against services started here: the example of docs/integrators.md on the
 * system clock, the integrator suite on the test clock. Prints how long each step took.
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { node, root, servingLine, type Started, startService } from "../support/ServiceProcess.ts"

const run = promisify(execFile)
const temp = mkdtempSync(join(tmpdir(), "sms-examples-"))
const project = join(temp, "examples")
const adminToken = "examples-operator-token-123"
const figures: Record<string, number> = {}

// npm without the npm_* variables of the `npm test` running vitest (they name this repository as
// the prefix and the package): the temporary project must be its own
const npmEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_"))
)

/** Runs `command` in `cwd`, timing it under `label`; a failure carries its output. */
const timed = async (
  label: string,
  command: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv
) => {
  const started = performance.now()
  try {
    return await run(command, args, { cwd, env, maxBuffer: 16 * 1024 * 1024 })
  } finally {
    figures[label] = Math.round(performance.now() - started) / 1000
  }
}

interface Packed {
  readonly filename: string
  readonly size: number
  readonly files: ReadonlyArray<{ readonly path: string }>
}

let packed: Packed
let onTestClock: Started
let onSystemClock: Started
let demoKey: string

beforeAll(async () => {
  const install = async () => {
    mkdirSync(join(temp, "client"))
    const { stdout } = await timed(
      "npm pack (prepack build)",
      "npm",
      ["pack", "--json", "--pack-destination", join(temp, "client")],
      join(root, "client"),
      npmEnv
    )
    packed = (JSON.parse(stdout) as ReadonlyArray<Packed>)[0]!
    mkdirSync(project)
    for (const file of readdirSync(join(root, "examples"))) {
      if (/\.(ts|json)$/.test(file) && file !== "package-lock.json")
        copyFileSync(join(root, "examples", file), join(project, file))
    }
    await timed("npm install", "npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], project, npmEnv)
  }
  const start = async (env: Record<string, string>) => {
    const service = await startService({
      SMS_DATA_DIR: "memory://",
      SMS_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: "warn",
      ...env
    })
    await service.waitFor(servingLine)
    return service
  }
  ;[onTestClock, onSystemClock] = await Promise.all([
    start({ SMS_CLOCK: "test" }),
    start({ SMS_SIMULATOR_RECEIPT_DELAY_MS: "0", SMS_SCHEDULER_ENABLED: "true" }),
    install()
  ])
  demoKey = /svc_sms_\S+/.exec(onSystemClock.output().stdout)![0]
}, 120_000)

afterAll(async () => {
  for (const service of [onTestClock, onSystemClock]) {
    service?.child.kill("SIGTERM")
    await service?.exited
  }
  rmSync(temp, { recursive: true, force: true })
  process.stdout.write(
    `[examples figures] ${Object.entries(figures)
      .map(([k, v]) => `${k} ${v} s`)
      .join(", ")}\n`
  )
})

/** Node 22 in the installed project, with only PATH and `env`. */
const nodeIn = (label: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  timed(label, node, args, project, { PATH: process.env.PATH ?? "", ...env })

describe("the packed client, installed into an integrator's project", () => {
  it("is JavaScript with its declarations and a package.json, under 1 MB", () => {
    expect(packed.size).toBeLessThan(1_000_000)
    const paths = packed.files.map((f) => f.path)
    expect(
      paths.filter((p) => !/^(dist\/(api|client|domain)\/\w+\.(js|d\.ts)|package\.json|README\.md)$/.test(p))
    ).toEqual([])
    expect(paths).toEqual(expect.arrayContaining(["dist/client/index.js", "dist/client/index.d.ts", "package.json"]))
    const manifest = JSON.parse(readFileSync(join(project, "node_modules/sms-service-client/package.json"), "utf8"))
    expect(manifest.peerDependencies).toEqual({ effect: "^4.1.0" })
    expect(readdirSync(join(project, "node_modules"))).toEqual(expect.arrayContaining(["effect", "sms-service-client"]))
  })

  it("type-checks the examples against the installed declarations", async () => {
    await timed("tsc of the examples", join(root, "node_modules/.bin/tsc"), ["-p", "."], project, {
      PATH: process.env.PATH ?? ""
    })
  })

  it("runs the example of docs/integrators.md: an SMS sent, replayed, delivered, through the installed client", async () => {
    const { stdout } = await nodeIn("send-sms.ts", ["send-sms.ts"], {
      SMS_URL: `http://127.0.0.1:${onSystemClock.port}`,
      SMS_API_KEY: demoKey
    })
    expect(stdout).toMatch(/^201 [0-9a-f-]{36} true true\ndelivered \d{4}-\d\d-\d\dT\S+Z\n999\n$/)
  })

  it("docs/integrators.md shows examples/send-sms.ts as it is", () => {
    const example = readFileSync(join(root, "examples/send-sms.ts"), "utf8")
    const readme = readFileSync(join(root, "docs/integrators.md"), "utf8")
    expect(readme).toContain(`\`\`\`ts\n${example.slice(example.indexOf("import { Effect }"))}\`\`\``)
  })

  it("passes the integrator suite (nine numbers, a batch, an expiry) against the service on its test clock", async () => {
    const { stdout } = await nodeIn("integrator suite", ["--test", "integrator-suite.test.ts"], {
      SMS_URL: `http://127.0.0.1:${onTestClock.port}`,
      SMS_ADMIN_TOKEN: adminToken
    })
    expect(stdout).toMatch(/^# pass 4$/m)
    expect(stdout).toMatch(/^# fail 0$/m)
  })
})
