/**
 * The SMSC simulator with a data directory, in-process: a new Smsc on the directory of a
 * disposed one gives ids above the old ones, sends the receipts still owed (sent and
 * unanswered, or not yet due) under their original ids, answers query_sm for the old ids, and
 * forgets a receipt once it is answered. The journal stays bounded, and one live process holds
 * a directory.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Book } from "../../simulator/smsc/Book.ts"
import { Smsc } from "../../simulator/smsc/Smsc.ts"
import { eventually } from "../support/Eventually.ts"
import { SmppClient } from "./SmppClient.ts"

const dirs: Array<string> = []
const freshDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "smsc-journal-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const start = (dataDir: string, receiptDelayMs: number) =>
  Smsc.start({ port: 0, dataDir, receiptDelayMs, slowMs: 50, lateMs: 100, receiptRetryMs: 60_000 })

const DELIVERED = 2
const UNDELIVERABLE = 5
const ENROUTE = 1

describe("the SMSC simulator with a data directory", () => {
  it("carries its ids, known messages and owed receipts over to a new Smsc on the same directory", async () => {
    const dir = freshDir()
    const first = await start(dir, 300)
    const client = await SmppClient.bound(first.port)
    client.acknowledge = false
    const delivered = await client.submit("+261340000001")
    const undelivered = await client.submit("+261340000002")
    const silent = await client.submit("+261340000006")
    await eventually(
      async () => client.receipts.length,
      (n) => n >= 2,
      { what: "the first receipts" }
    )
    const notYetDue = await client.submit("+261340000001")
    client.close()
    await first.dispose()
    expect(first.receiptsOwed).toBe(3)

    const second = await start(dir, 300)
    const again = await SmppClient.bound(second.port)
    const receipts = await eventually(
      async () => again.receipts,
      (r) => r.length >= 3,
      { what: "the owed receipts" }
    )
    expect([...receipts].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: delivered.id, stat: "DELIVRD" },
      { id: undelivered.id, stat: "UNDELIV" },
      { id: notYetDue.id, stat: "DELIVRD" }
    ])
    const old = [delivered, undelivered, silent, notYetDue].map((s) => Number(s.id))
    const fresh = await again.submit("+261340000006")
    expect(fresh.status).toBe(0)
    expect(Number(fresh.id)).toBeGreaterThan(Math.max(...old))
    expect(await again.query(delivered.id)).toEqual({ status: 0, state: DELIVERED })
    expect(await again.query(undelivered.id)).toEqual({ status: 0, state: UNDELIVERABLE })
    expect(await again.query(silent.id)).toEqual({ status: 0, state: ENROUTE })
    expect((await again.query("999")).status).toBe(0x67)
    await eventually(
      async () => second.receiptsOwed,
      (n) => n === 0,
      { what: "the receipts acknowledged" }
    )
    again.close()
    await second.dispose()

    const third = await start(dir, 300)
    expect(third.receiptsOwed).toBe(0)
    const last = await SmppClient.bound(third.port)
    expect(await last.query(notYetDue.id)).toEqual({ status: 0, state: DELIVERED })
    expect(Number((await last.submit("+261340000006")).id)).toBeGreaterThan(Number(fresh.id))
    last.close()
    await third.dispose()
  })

  it("keeps its journal bounded: the newest messages, what is still owed, the ids", () => {
    const dir = freshDir()
    const book = Book.open(dir, 100)
    const ids: Array<number> = []
    for (let i = 0; i < 30_000; i++) {
      const message = {
        ids: [book.newId()],
        from: "TEST",
        to: "+261340000001",
        sourceTon: 5,
        sourceNpi: 0,
        destTon: 1,
        destNpi: 1,
        state: ENROUTE
      }
      ids.push(message.ids[0]!)
      book.taken(message, { word: "DELIVRD", dueAt: 0 })
      message.state = DELIVERED
      book.stateChanged(message)
      if (i !== 7) book.acknowledged(message)
    }
    const lines = readFileSync(join(dir, "journal.jsonl"), "utf8").split("\n").length
    expect(lines).toBeLessThan(15_000)
    book.close()

    const reopened = Book.open(dir, 100)
    expect(reopened.receiptsOwed.map((o) => o.message.ids[0])).toEqual([ids[7]])
    expect(reopened.find(ids[0]!)).toBeUndefined()
    expect(reopened.find(ids.at(-1)!)?.state).toBe(DELIVERED)
    expect(reopened.newId()).toBeGreaterThan(ids.at(-1)!)
    expect(readFileSync(join(dir, "journal.jsonl"), "utf8").split("\n").length).toBeLessThan(110)
    reopened.close()
  })

  it("refuses a directory another live process holds", async () => {
    const dir = freshDir()
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" })
    try {
      writeFileSync(join(dir, "pid"), `${other.pid}\n`)
      await expect(start(dir, 300)).rejects.toThrow(`in use by process ${other.pid}`)
    } finally {
      other.kill("SIGKILL")
    }
  })
})
