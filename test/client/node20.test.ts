/**
 * The typed client's floor: its JavaScript, built as `npm pack` in client/ builds it, runs on
 * Node 20 (client/package.json `engines`). A program under the machine's Node 20 (not the
 * service's Node 22 of node_modules/.bin) imports the built client and sends a message to a
 * service started here, then reads the balance. Skipped where no Node 20 is found
 * (SMS_TEST_NODE20 names one; else /usr/bin/node, /bin/node, /usr/local/bin/node).
 */
import { execFile, spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { root, servingLine, type Started, startService } from "../support/ServiceProcess.ts"

const run = promisify(execFile)

/** A Node 20 binary of the machine, if there is one. */
const node20 = [process.env.SMS_TEST_NODE20, "/usr/bin/node", "/bin/node", "/usr/local/bin/node"].find((candidate) => {
  if (candidate === undefined || candidate === "") return false
  const version = spawnSync(candidate, ["--version"], { encoding: "utf8" })
  return version.status === 0 && version.stdout.startsWith("v20.")
})

const temp = mkdtempSync(join(tmpdir(), "sms-client-node20-"))
let service: Started | undefined
afterAll(async () => {
  if (service !== undefined) {
    service.child.kill("SIGTERM")
    await service.exited
  }
  rmSync(temp, { recursive: true, force: true })
})

const program = `import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeSmsClient, sendMessage } from "sms-service-client"

const program = Effect.gen(function* () {
  const client = yield* makeSmsClient({ baseUrl: process.env.SMS_URL, apiKey: process.env.SMS_API_KEY })
  const sent = yield* sendMessage(client, "node20-1", { to: "+261340000001", text: "Salama" })
  const balance = yield* client.balance.get()
  return { status: sent.status, messageStatus: sent.body.status, available: balance.available }
}).pipe(Effect.provide(FetchHttpClient.layer))

console.log(JSON.stringify({ node: process.version, ...(await Effect.runPromise(program)) }))
`

describe.skipIf(node20 === undefined)(`the built client on Node 20 (${node20 ?? "none found"})`, () => {
  it("imports the client as packed and sends a message through it", async () => {
    const [started] = await Promise.all([
      startService({ SMS_DATA_DIR: "memory://", LOG_LEVEL: "warn", SMS_SCHEDULER_ENABLED: "false" }),
      // the build of client/'s prepack, into an integrator's node_modules
      (async () => {
        const installed = join(temp, "node_modules/sms-service-client")
        mkdirSync(installed, { recursive: true })
        await run(
          join(root, "node_modules/.bin/tsc"),
          ["-p", "client/tsconfig.json", "--outDir", join(installed, "dist")],
          {
            cwd: root
          }
        )
        copyFileSync(join(root, "client/package.json"), join(installed, "package.json"))
        // the peer dependency, as the integrator installs it
        symlinkSync(join(root, "node_modules/effect"), join(temp, "node_modules/effect"), "dir")
        writeFileSync(join(temp, "send.mjs"), program)
      })()
    ])
    service = started
    await service.waitFor(servingLine)
    const apiKey = /svc_sms_\S+/.exec(service.output().stdout)?.[0]
    expect(apiKey, service.output().stdout).toBeDefined()

    const { stdout } = await run(node20!, ["send.mjs"], {
      cwd: temp,
      env: { PATH: process.env.PATH ?? "", SMS_URL: `http://127.0.0.1:${service.port}`, SMS_API_KEY: apiKey! }
    })
    expect(JSON.parse(stdout)).toEqual({
      node: expect.stringMatching(/^v20\./),
      status: 201,
      messageStatus: "accepted",
      available: 999
    })
  }, 180_000)

  it("declares that floor in client/package.json", () => {
    const manifest = JSON.parse(readFileSync(join(root, "client/package.json"), "utf8"))
    expect(manifest.engines).toEqual({ node: ">=20" })
  })
})
