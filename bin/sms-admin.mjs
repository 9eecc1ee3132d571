#!/usr/bin/env node
// Launcher of the sms-admin CLI (src/admin/cli/main.ts), so that `npx sms-admin ...` works from
// the project directory. The CLI is TypeScript run through Node's type stripping (Node >= 22.18).
// On such a Node the entry is imported in this process; on an older one (e.g. a system Node 20)
// the project's own Node (devDependency `node`, node_modules/.bin/node next to this file's
// package) is started on the entry with the same arguments and stdio, and its exit status is ours.
// Either way Node's compile cache is on (in the system's temporary directory, unless
// NODE_COMPILE_CACHE names another; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a call loads
// about 390 modules, mostly Effect's, and compiling them is the largest part of its time.
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import module from "node:module"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const entry = join(root, "src", "admin", "cli", "main.ts")

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
const stripsTypesByDefault = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18)

if (stripsTypesByDefault) {
  module.enableCompileCache?.()
  await import(pathToFileURL(entry).href)
} else {
  const projectNode = join(root, "node_modules", ".bin", "node")
  if (!existsSync(projectNode)) {
    process.stderr.write(
      `sms-admin needs Node.js >= 22.18 (this is ${process.version}) or the project's own Node at ${projectNode};` +
        ` run 'npm install' in ${root}.\n`
    )
    process.exit(69)
  }
  const env = { NODE_COMPILE_CACHE: join(tmpdir(), "node-compile-cache"), ...process.env }
  const child = spawn(projectNode, [entry, ...process.argv.slice(2)], { stdio: "inherit", env })
  // Ctrl-C reaches the child too (same process group): let it decide, and forward a TERM.
  process.on("SIGINT", () => {})
  process.on("SIGTERM", () => child.kill("SIGTERM"))
  child.on("error", (error) => {
    process.stderr.write(`sms-admin: cannot start ${projectNode}: ${error.message}\n`)
    process.exit(69)
  })
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    } else {
      process.exit(code ?? 1)
    }
  })
}
