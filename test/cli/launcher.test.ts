/** bin/sms-admin.mjs: runs the TypeScript entry on this Node, or re-spawns the project's Node from an older one. */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const launcher = fileURLToPath(new URL("../../bin/sms-admin.mjs", import.meta.url))

/** The Node running the tests (>= 22.18: imports in-process) and, when present, a system Node (older: re-spawns). */
const nodes = [process.execPath, "/usr/bin/node", "/usr/local/bin/node"].filter((p, i, all) => existsSync(p) && all.indexOf(p) === i)

const launch = (node: string, args: ReadonlyArray<string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env.SMS_ADMIN_TOKEN
  delete env.SMS_ADMIN_URL
  return spawnSync(node, [launcher, ...args], { encoding: "utf8", cwd: "/", env, timeout: 30_000 })
}

describe.each(nodes)("bin/sms-admin.mjs started by %s", (node) => {
  it("prints usage for --help and exits 0", () => {
    const result = launch(node, ["--help"])
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("Usage: sms-admin <command>")
    expect(result.stdout).toContain("message erase <org_id> <message_id>")
  })

  it("forwards the exit status of usage and network errors", () => {
    const usage = launch(node, ["org", "frobnicate"])
    expect(usage.status).toBe(64)
    expect(usage.stderr).toContain("error: unknown command 'org frobnicate'")
    // Port 1 is refused by fetch before any connection: a network error without a network.
    const network = launch(node, ["org", "show", "o1", "--token", "t", "--url", "http://127.0.0.1:1"])
    expect(network.status).toBe(2)
    expect(network.stderr).toMatch(/^error: cannot reach the SMS service at http:\/\/127\.0\.0\.1:1\/admin\/v1\/organizations\/o1: /)
  })
})
