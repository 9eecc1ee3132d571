/**
 * Inbound messages survive the faults of docs/two-way.md: the
 * service on SMPP (a raw SMSC in this test process, which sends again every part not answered
 * status 0, as an SMSC does) is killed with `kill -9` between the parts of a long MO, then a new
 * process takes over; and the suite's PostgreSQL is stopped while MO arrive (each is answered
 * 0x64 and sent again until stored). Every MO is then stored exactly once, whole: none
 * acknowledged and lost, none counted twice.
 */
import smpp from "smpp"
import { describe, expect, it } from "vitest"
import { moPdus } from "../../simulator/smsc/MoParts.ts"
import { RawSmsc } from "../support/RawSmsc.ts"
import { serve } from "../support/ServedProcess.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"

const postgres = useThrowawayPostgres("faults-mo-kill9-outage")

const until = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 60_000) => {
  const end = Date.now() + timeoutMs
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const mo = (from: string, fields: Record<string, unknown>) =>
  new smpp.PDU("deliver_sm", {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: from.replace(/^\+/, ""),
    dest_addr_ton: 0,
    dest_addr_npi: 0,
    destination_addr: "4242",
    ...fields
  })

/** Sends `pdu` until it is answered status 0, on whatever connection is bound; the statuses it got. */
const deliver = async (smsc: RawSmsc, make: () => smpp.PDU): Promise<Array<number>> => {
  const statuses: Array<number> = []
  while (true) {
    await until("a bound connection", () => smsc.connections.some((c) => c.bound && !c.closed))
    const [sequence] = smsc.send(make())
    try {
      await until("an answer", () => smsc.answersTo([sequence!]).length > 0, 5_000)
    } catch {
      statuses.push(-1)
      continue
    }
    const status = smsc.answersTo([sequence!])[0]!.command_status ?? 0
    statuses.push(status)
    if (status === 0) return statuses
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe("inbound messages through kill -9 and a database outage", () => {
  it("stores every MO exactly once, whole", async () => {
    const smsc = await RawSmsc.start()
    try {
      const env = {
        DATABASE_URL: postgres().url,
        SMS_PROVIDER: "smpp",
        SMS_SMPP_URL: `smpp://sim:sim@127.0.0.1:${smsc.port}`
      }
      const first = await serve(env)
      const long = "Misaotra tompoko, efa voaray ny hafatrao. ".repeat(8).trim()
      const from = "+261340001234"
      const parts = moPdus(long, "udh8", 42).map((p) => ({ ...p, short_message: Buffer.from(p.short_message) }))
      expect(parts.length).toBeGreaterThan(2)

      // the first part stored and acknowledged, then the process dies
      expect(await deliver(smsc, () => mo(from, parts[0]!))).toEqual([0])
      first.started.child.kill("SIGKILL")
      await first.started.exited
      const second = await serve(env)
      // the rest on the new process, the first part sent again as an SMSC that lost its answer would
      for (const part of [...parts.slice(1), parts[0]!]) await deliver(smsc, () => mo(from, part))

      // the database stops while whole messages arrive: refused (0x64) until it is back
      const outageFrom = "+261340005678"
      await postgres().stop()
      const during = deliver(smsc, () =>
        mo(outageFrom, { esm_class: 0, data_coding: 0, short_message: Buffer.from("STOP") })
      )
      await new Promise((r) => setTimeout(r, 3_000))
      await postgres().start()
      const statuses = await during
      expect(statuses.at(-1)).toBe(0)
      expect(statuses.length, `answers while the database was down: ${statuses}`).toBeGreaterThan(1)

      const inbound = async () => {
        const page = await second.admin("GET", "/inbound-messages")
        return page.status === 200
          ? (page.body.results as Array<{ from: string; text: string; incomplete: boolean; segments: number }>)
          : []
      }
      await until("both messages made", async () => (await inbound()).length >= 2)
      const made = await inbound()
      expect(made.filter((m) => m.from === from).map((m) => [m.text, m.incomplete, m.segments])).toEqual([
        [long, false, parts.length]
      ])
      expect(made.filter((m) => m.from === outageFrom).map((m) => m.text)).toEqual(["STOP"])
    } finally {
      await smsc.close()
    }
  })
})
