/**
 * `node bench/profile.ts <file.cpuprofile> [top]`: the functions with the most self time in a
 * V8 CPU profile (from `npm run bench -- --cpu-prof`), and self time per package.
 */
import { readFileSync } from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [file, topArg] = process.argv.slice(2)
if (file === undefined) {
  process.stderr.write("usage: node bench/profile.ts <file.cpuprofile> [top]\n")
  process.exit(2)
}
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))

const shortUrl = (url: string) => {
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) return url.slice(nm + "node_modules/".length)
  const src = url.search(/\/(src|simulator)\//)
  return src >= 0 ? url.slice(src + 1) : url.replace(/^node:/, "node:")
}

const packageOf = (url: string) => {
  if (url === "") return "(native/runtime)"
  const nm = url.lastIndexOf("node_modules/")
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/")
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.startsWith("node:")) return "node (built-in)"
  return /\/(src|simulator)\//.test(url) ? "service (src/)" : url
}

const selfByFunction = new Map<string, number>()
const selfByPackage = new Map<string, number>()
let total = 0
profile.samples.forEach((id, i) => {
  const node = byId.get(id)
  const dt = profile.timeDeltas[i] ?? 0
  if (node === undefined) return
  total += dt
  const f = node.callFrame
  const key = `${f.functionName || "(anonymous)"}  ${f.url === "" ? "" : `${shortUrl(f.url)}:${f.lineNumber + 1}`}`
  selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + dt)
  const pkg = f.url === "" ? (f.functionName.startsWith("(") ? f.functionName : "(native/runtime)") : packageOf(f.url)
  selfByPackage.set(pkg, (selfByPackage.get(pkg) ?? 0) + dt)
})

const table = (title: string, entries: Map<string, number>, n: number) => {
  const lines = [`| ${title} | self ms | self % |`, "|---|---:|---:|"]
  for (const [name, us] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    lines.push(
      `| \`${name.replaceAll("|", "\\|")}\` | ${(us / 1000).toFixed(0)} | ${((100 * us) / total).toFixed(1)} |`
    )
  }
  return lines.join("\n")
}

process.stdout.write(
  `total sampled: ${(total / 1e6).toFixed(1)} s\n\n${table("function", selfByFunction, top)}\n\n${table("package", selfByPackage, 15)}\n`
)
