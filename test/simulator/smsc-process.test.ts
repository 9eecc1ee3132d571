/**
 * The SMSC simulator as a process: a kill -9 loses nothing it owes (receipts come after the
 * restart under their original ids, new ids are above the old ones), and a kill -9 of
 * `npm run smsc` does not leave the simulator listening.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { eventually } from "../support/Eventually.ts"
import { freePort } from "../support/ServiceProcess.ts"
import { startSmscProcess } from "../support/SmscProcess.ts"
import { awaitGoneWithNpm, kill9 } from "../support/SimulatorProcess.ts"
import { SmppClient } from "./SmppClient.ts"

const dataDir = mkdtempSync(join(tmpdir(), "smsc-process-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

const startSimulator = (port: number, dir: string) =>
  startSmscProcess(port, dir, { SMS_SIMULATOR_RECEIPT_DELAY_MS: "2500" })

describe("the SMSC simulator process", () => {
  it("sends after a kill -9 and restart the receipts it owed, under their ids, and never gives an id twice", async () => {
    const port = await freePort()
    const killed = await startSimulator(port, dataDir)
    const before = await SmppClient.bound(port)
    const submitted = [
      ...(await Promise.all(Array.from({ length: 5 }, () => before.submit("+261340000001")))),
      await before.submit("+261340000002")
    ]
    expect(submitted.map((s) => s.status)).toEqual([0, 0, 0, 0, 0, 0])
    await kill9(killed)
    before.close()
    expect(before.receipts).toEqual([])

    const restarted = await startSimulator(port, dataDir)
    try {
      const after = await SmppClient.bound(port)
      const receipts = await eventually(
        async () => after.receipts,
        (r) => r.length >= submitted.length,
        {
          timeoutMs: 15_000,
          what: "the owed receipts"
        }
      )
      expect([...receipts].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        submitted
          .map((s, i) => ({ id: s.id, stat: i === 5 ? "UNDELIV" : "DELIVRD" }))
          .sort((a, b) => a.id.localeCompare(b.id))
      )
      const fresh = await after.submit("+261340000006")
      expect(Number(fresh.id)).toBeGreaterThan(Math.max(...submitted.map((s) => Number(s.id))))
      expect(await after.query(submitted[0]!.id)).toEqual({ status: 0, state: 2 })
      after.close()
    } finally {
      await kill9(restarted)
    }
  })

  it("stops listening when `npm run smsc` is killed with -9", async () => {
    const port = await freePort()
    await awaitGoneWithNpm("smsc", port, { SMS_SMSC_PORT: String(port), SMS_SMSC_DATA_DIR: join(dataDir, "npm") })
  })
})
