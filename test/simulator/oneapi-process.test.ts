/**
 * The OneAPI simulator as a process (`node simulator/oneapi/main.ts`, as an operator runs it):
 * it starts with a JSON log line, issues tokens, takes a send and POSTs its receipt, sends an
 * inbound message through its control route, carries on after a kill -9 (a correlator taken
 * before answers 409, ids go on above the old ones), and stops on SIGTERM; a bad variable or a
 * data directory in use stops its start with one line, and a kill -9 of `npm run oneapi` does not
 * leave it listening (docs/operators.md#the-oneapi-simulator).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { OneApiSim } from "../../simulator/oneapi/OneApiSim.ts"
import { eventually } from "../support/Eventually.ts"
import { freePort, listens, node, root } from "../support/ServiceProcess.ts"
import { awaitGoneWithNpm } from "../support/SimulatorProcess.ts"
import { NotifyReceiver } from "./NotifyReceiver.ts"
import { sendSms, tokenOf } from "./OneApiClient.ts"

const dataDir = mkdtempSync(join(tmpdir(), "oneapi-process-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

interface SimProcess {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Its exit code (null when ended by a signal), once it has ended. */
  readonly exited: Promise<number | null>
}

/** Runs the simulator with `env` (and nothing else of this process's environment but PATH). */
const run = (env: Record<string, string>): SimProcess => {
  const child = spawn(node, ["simulator/oneapi/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Starts it on `port` and `dir`, once it says it listens; fails with its output if it exits first. */
const startProcess = async (port: number, dir: string, env: Record<string, string> = {}): Promise<SimProcess> => {
  const sim = run({ SMS_ONEAPI_PORT: String(port), SMS_ONEAPI_DATA_DIR: dir, ...env })
  await eventually(
    async () => sim.stdout(),
    (o) => o.includes("OneAPI simulator listening") || sim.child.exitCode !== null,
    { timeoutMs: 30_000, what: "the simulator listening" }
  )
  if (sim.child.exitCode !== null) throw new Error(`the simulator exited: ${sim.stdout()}${sim.stderr()}`)
  return sim
}

const kill9 = async (sim: SimProcess): Promise<void> => {
  if (sim.child.exitCode === null && sim.child.signalCode === null) sim.child.kill("SIGKILL")
  await sim.exited
}

const logLines = (sim: SimProcess) =>
  sim
    .stdout()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe("the OneAPI simulator process", () => {
  it("serves tokens, sends and receipts, carries its correlators and tokens over a kill -9, and stops on SIGTERM", async () => {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const receiver = await NotifyReceiver.start()
    const dir = join(dataDir, "main")
    const env = { SMS_SIMULATOR_RECEIPT_DELAY_MS: "100" }
    const idOf = (location: string | null) => Number(location?.split("/").at(-1))
    let firstId = Number.NaN
    let token = ""
    const killed = await startProcess(port, dir, env)
    try {
      expect(logLines(killed)[0]).toMatchObject({
        message: "OneAPI simulator listening",
        level: "INFO",
        port,
        token_url: `${baseUrl}/oauth/v3/token`,
        data_dir: dir,
        receipts_owed: 0,
        correlators_known: 0
      })
      token = await tokenOf(`${baseUrl}/oauth/v3/token`)
      const notifyUrl = receiver.url("/oneapi/receipts/k")
      const first = await sendSms(baseUrl, token, { to: "+261340000001", correlator: "first", notifyUrl })
      expect(first.status).toBe(201)
      firstId = idOf(first.headers.get("location"))
      expect(firstId).toBeGreaterThanOrEqual(1_000_000_000)
      const [receipt] = await eventually(
        async () => receiver.where((b) => b?.deliveryInfoNotification?.callbackData === "first"),
        (p) => p.length > 0,
        { what: "the receipt" }
      )
      expect(receipt!.body.deliveryInfoNotification.deliveryInfo.deliveryStatus).toBe("DeliveredToTerminal")
      const control = await fetch(`${baseUrl}/simulator/mobile-originated`, {
        method: "POST",
        body: JSON.stringify({ from: "+261341234567", to: "DEMO", text: "Salama" })
      })
      expect(control.status).toBe(202)
      const [inbound] = await eventually(
        async () => receiver.where((b) => b?.inboundSMSMessageNotification !== undefined),
        (p) => p.length > 0,
        { what: "the inbound message" }
      )
      expect(inbound!.path).toBe("/oneapi/inbound/k")
      expect(inbound!.body.inboundSMSMessageNotification.inboundSMSMessage.message).toBe("Salama")
    } finally {
      await kill9(killed)
    }

    const restarted = await startProcess(port, dir, env)
    try {
      expect(logLines(restarted)[0]).toMatchObject({ correlators_known: 1 })
      // the token issued before the kill still holds
      const replay = await sendSms(baseUrl, token, { to: "+261340000001", correlator: "first" })
      expect(replay.status).toBe(409)
      const next = await sendSms(baseUrl, token, { to: "+261340000006", correlator: "second" })
      expect(next.status).toBe(201)
      expect(idOf(next.headers.get("location"))).toBeGreaterThan(firstId)

      restarted.child.kill("SIGTERM")
      expect(await restarted.exited).toBe(0)
      expect(logLines(restarted).at(-1)).toMatchObject({ message: "OneAPI simulator stopping", sent: 1 })
      expect(await listens(port)).toBe(false)
    } finally {
      await kill9(restarted)
      await receiver.close()
    }
  })

  it("stops its start with one line per bad variable", async () => {
    const bad = run({ SMS_ONEAPI_PORT: "http", SMS_ONEAPI_DATA_DIR: join(dataDir, "bad") })
    expect(await bad.exited).toBe(1)
    expect(bad.stderr()).toBe('configuration error: SMS_ONEAPI_PORT must be an integer from 1 to 65535 (got "http")\n')
    const two = run({
      SMS_ONEAPI_PORT: "0",
      SMS_ONEAPI_INBOUND_NOTIFY_URL: "ftp://example/in",
      SMS_ONEAPI_DATA_DIR: join(dataDir, "bad")
    })
    expect(await two.exited).toBe(1)
    expect(
      two
        .stderr()
        .split("\n")
        .filter((l) => l !== "")
    ).toEqual([
      'configuration error: SMS_ONEAPI_PORT must be an integer from 1 to 65535 (got "0")',
      'configuration error: SMS_ONEAPI_INBOUND_NOTIFY_URL must be an http or https URL (got "ftp://example/in")'
    ])
  })

  it("keeps a second simulator off its data directory", async () => {
    const dir = join(dataDir, "held")
    const holder = await startProcess(await freePort(), dir)
    try {
      await expect(OneApiSim.start({ dataDir: dir })).rejects.toThrow(`in use by process ${holder.child.pid}`)
      const second = run({ SMS_ONEAPI_PORT: String(await freePort()), SMS_ONEAPI_DATA_DIR: dir })
      expect(await second.exited).toBe(1)
      expect(second.stderr()).toBe(
        `OneAPI simulator not started: the data directory ${dir} is in use by process ${holder.child.pid}\n`
      )
    } finally {
      await kill9(holder)
    }
  })

  it("stops listening when `npm run oneapi` is killed with -9", async () => {
    const port = await freePort()
    await awaitGoneWithNpm("oneapi", port, { SMS_ONEAPI_PORT: String(port), SMS_ONEAPI_DATA_DIR: join(dataDir, "npm") })
  })
})
