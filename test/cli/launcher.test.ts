/**
 * bin/sms-admin.mjs as `npx sms-admin` runs it, in a real process: it runs the TypeScript entry on
 * this Node, or re-spawns the project's Node from an older one, and its exit status is the CLI's.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const launcher = fileURLToPath(new URL("../../bin/sms-admin.mjs", import.meta.url))

/** The Node running the tests (>= 22.18: imports in-process) and, when present, a system Node (older: re-spawns). */
const nodes = [process.execPath, "/usr/bin/node", "/usr/local/bin/node"].filter(
  (p, i, all) => existsSync(p) && all.indexOf(p) === i
)

const launch = (node: string, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, ...extraEnv }
    if (extraEnv.SMS_ADMIN_TOKEN === undefined) delete env.SMS_ADMIN_TOKEN
    if (extraEnv.SMS_ADMIN_URL === undefined) delete env.SMS_ADMIN_URL
    if (extraEnv.NODE_COMPILE_CACHE === undefined) delete env.NODE_COMPILE_CACHE
    const child = spawn(node, [launcher, ...args], { cwd: "/", env, timeout: 30_000 })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

// A stand-in for the service that answers every call with the spec's 401 error body.
const server = createServer((_request, response) => {
  response.writeHead(401, { "content-type": "application/json" })
  response.end(
    JSON.stringify({
      error: { code: "invalid_api_key", message: "The operator API needs Authorization: Bearer <SMS_ADMIN_TOKEN>" }
    })
  )
})
let serverUrl = ""
beforeAll(
  () =>
    new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", () => {
        serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resolve()
      })
    )
)
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe.each(nodes)("bin/sms-admin.mjs started by %s", (node) => {
  it("prints every command for --help and exits 0", async () => {
    const result = await launch(node, ["--help"])
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("USAGE\n  sms-admin <subcommand> [flags]")
    expect(result.stdout).toMatch(/^ {2}message erase +\S/m)
  })

  it("exits 64 on a usage error and 2 when nothing answers", async () => {
    const usage = await launch(node, ["org", "frobnicate"])
    expect(usage.status).toBe(64)
    expect(usage.stderr).toContain('error: Unknown subcommand "frobnicate" for "sms-admin org"')
    // port 1 is refused by fetch before any connection: a network error without a network
    const network = await launch(node, ["org", "show", "o1", "--token", "t", "--url", "http://127.0.0.1:1"])
    expect(network.status).toBe(2)
    expect(network.stderr).toMatch(
      /^error: cannot reach the SMS service at http:\/\/127\.0\.0\.1:1\/admin\/v1\/organizations\/o1: /
    )
  })

  it("keeps Node's compile cache in the temporary directory, so that later calls compile less", async () => {
    const temp = mkdtempSync(join(tmpdir(), "sms-launcher-"))
    try {
      expect((await launch(node, ["--help"], { TMPDIR: temp })).status).toBe(0)
      const cache = join(temp, "node-compile-cache")
      expect(existsSync(cache) ? readdirSync(cache).filter((d) => d.startsWith("v22.")) : []).toHaveLength(1)
    } finally {
      rmSync(temp, { recursive: true, force: true })
    }
  })

  it("exits 1 when the API answers an error, reading SMS_ADMIN_URL and SMS_ADMIN_TOKEN", async () => {
    const result = await launch(node, ["org", "show", "o1"], {
      SMS_ADMIN_URL: serverUrl,
      SMS_ADMIN_TOKEN: "wrong-token"
    })
    expect(result).toEqual({
      status: 1,
      stdout: "",
      stderr: "error: invalid_api_key: The operator API needs Authorization: Bearer <SMS_ADMIN_TOKEN>\n"
    })
  })
})
