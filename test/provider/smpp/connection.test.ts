/**
 * The connection through its troubles: an SMSC restarting under load (what was in flight is
 * Unknown, what was queued goes after the reconnection, nothing is sent twice), a connection
 * dropped after the write, a refused bind (Unreachable, health and logs say why, never the
 * password), an interrupted submission whose late answer is still reported, and shutdown.
 */
import { Effect, Fiber, Redacted } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import { FakeInbox, routeTo, startSmsc, submission, testSettings, until, withProvider } from "./support.ts"

let smsc: Smsc
beforeEach(async () => {
  smsc = await startSmsc()
})
afterEach(() => smsc.dispose())

/** The SMSC closing a socket reads as a close, or as a reset when data was still on the way. */
const lostAfterWrite = /^smsc: connection lost after the write \((closed by the SMSC|ECONNRESET)\)$/

const ordinary = (i: number): string => `+26134${String(1_000_000 + i).padStart(7, "0")}`

describe("reconnection", () => {
  it("after an SMSC restart mid-load: in-flight Unknown, queued sent after the reconnection, nothing submitted twice", async () => {
    smsc.responseDelayMs = 150
    const sent = Array.from({ length: 20 }, (_, i) => submission(ordinary(i), `load ${i}`))
    let receivedBeforeStop = 0
    const results = await withProvider(
      testSettings([routeTo(smsc, { window: 4 })], { responseTimeoutMs: 4000 }),
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(Effect.forEach(sent, (s) => p.submit(s), { concurrency: "unbounded" }))
          yield* until("a first window answered and a second one in flight", () => smsc.received.length >= 6)
          yield* Effect.promise(() => {
            receivedBeforeStop = smsc.received.length
            return smsc.stop()
          })
          yield* Effect.promise(() => smsc.restart())
          return yield* Fiber.join(fiber)
        })
    )
    const unknown = results.filter((r) => r._tag === "Unknown")
    expect(results.filter((r) => r._tag !== "Accepted" && r._tag !== "Unknown")).toEqual([])
    expect(unknown.length).toBeGreaterThan(0)
    for (const r of unknown) expect(r).toEqual({ _tag: "Unknown", reason: expect.stringMatching(lostAfterWrite) })
    expect(smsc.binds).toBe(2)
    // what was queued behind the window went after the reconnection, and was taken
    const afterRestart = smsc.received.slice(receivedBeforeStop).map((r) => r.text)
    expect(afterRestart.length).toBeGreaterThan(0)
    sent.forEach((s, i) => {
      expect(smsc.submitsOfText(s.text), s.text).toBeLessThanOrEqual(1)
      if (afterRestart.includes(s.text)) expect(results[i]!._tag, s.text).toBe("Accepted")
      if (results[i]!._tag === "Accepted") expect(smsc.submitsOfText(s.text), s.text).toBe(1)
    })
  })

  it("answers Unknown at once when the connection drops after the write", async () => {
    const s = submission(testNumbers.unknownForGood, "dropped")
    const { result, elapsedMs } = await withProvider(
      testSettings([routeTo(smsc)], { responseTimeoutMs: 5000 }),
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          const start = performance.now()
          const fiber = yield* Effect.forkChild(p.submit(s))
          yield* until("the write", () => smsc.received.length === 1)
          smsc.dropConnections()
          const result = yield* Fiber.join(fiber)
          return { result, elapsedMs: performance.now() - start }
        })
    )
    expect(result).toEqual({ _tag: "Unknown", reason: expect.stringMatching(lostAfterWrite) })
    expect(elapsedMs).toBeLessThan(2000)
  })

  it("reports the late answer of a submission whose fiber was interrupted after the write", async () => {
    smsc = await (async () => {
      await smsc.dispose()
      return startSmsc({ lateMs: 300 })
    })()
    const inbox = new FakeInbox()
    const s = submission(testNumbers.unknownThenAccepted, "interrupted")
    await withProvider(testSettings([routeTo(smsc)], { responseTimeoutMs: 5000 }), inbox, (p) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(p.submit(s))
        yield* until("the write", () => smsc.received.length === 1)
        yield* Fiber.interrupt(fiber)
        yield* until("the late answer", () => inbox.lateResults.length === 1)
      })
    )
    expect(inbox.lateResults).toEqual([
      {
        organisationId: "org-1",
        messageId: s.messageId,
        result: { _tag: "Accepted", providerRef: `smsc:${smsc.messages[0]!.ids[0]}` }
      }
    ])
  })

  it("answers what is still in flight Unknown when the provider shuts down", async () => {
    const s = submission(testNumbers.unknownForGood, "shutdown")
    const fiber = await withProvider(testSettings([routeTo(smsc)], { responseTimeoutMs: 5000 }), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkDetach(p.submit(s))
        yield* until("the write", () => smsc.received.length === 1)
        return fiber
      })
    )
    const result = await Effect.runPromise(Fiber.join(fiber))
    expect(result).toEqual({ _tag: "Unknown", reason: "smsc: connection lost after the write (unbound)" })
  })
})

describe("refused bind", () => {
  it("answers Unreachable with nothing written, and health and the logs say why without the password", async () => {
    smsc.refuseBinds = true
    const logs: Array<string> = []
    const route = routeTo(smsc, {
      name: "telma",
      endpoint: { host: "127.0.0.1", port: smsc.port, systemId: "sim", password: Redacted.make("s3cret-pw") }
    })
    // the retry waits longer than the deadline, so that the deadline finds the refusal, not a retry
    // in progress (a loaded machine may take most of a short deadline to connect once)
    const timing = { ...testSettings([]).timing, reconnectInitialMs: 10_000, reconnectMaxMs: 10_000 }
    const { result, health } = await withProvider(
      testSettings([route], { responseTimeoutMs: 2_000, timing }),
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          const result = yield* p.submit(submission(testNumbers.delivered))
          return { result, health: yield* p.health }
        }),
      logs
    )
    expect(result._tag).toBe("Unreachable")
    expect(result._tag === "Unreachable" && result.reason).toMatch(
      new RegExp(
        `^telma: not bound before the deadline \\(bind refused by 127\\.0\\.0\\.1:${smsc.port}: 0x0d ESME_RBINDFAIL; retrying in [0-9.]+ s\\)$`
      )
    )
    expect(health).toEqual([
      {
        route: "telma",
        connected: false,
        detail: expect.stringMatching(/^bind refused by .*: 0x0d ESME_RBINDFAIL; retrying in /),
        slot: { held: 0, of: 1 }
      }
    ])
    expect(smsc.received).toEqual([])
    const warnings = logs.map((l) => JSON.parse(l)).filter((l) => l.level === "WARN")
    expect(warnings.length).toBeGreaterThan(0)
    expect(warnings[0].annotations).toMatchObject({ route: "telma", detail: expect.stringContaining("bind refused") })
    expect(logs.join("\n")).not.toContain("s3cret-pw")
  })

  it("names a wrong password; a send waits for a bind up to its own deadline, however long the outage has lasted", async () => {
    const route = routeTo(smsc, {
      endpoint: { host: "127.0.0.1", port: smsc.port, systemId: "sim", password: Redacted.make("wrong") }
    })
    const { first, second, health } = await withProvider(
      testSettings([route], { responseTimeoutMs: 300 }),
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          const first = yield* p.submit(submission(testNumbers.delivered))
          yield* Effect.sleep(50) // the outage is now longer than a deadline
          const start = performance.now()
          const second = yield* p.submit(submission(testNumbers.delivered))
          return { first, second: { result: second, ms: performance.now() - start }, health: yield* p.health }
        })
    )
    expect(first._tag).toBe("Unreachable")
    expect(second.result).toEqual({
      _tag: "Unreachable",
      reason: expect.stringMatching(
        /^smsc: not bound before the deadline \(bind refused by .*: 0x0e ESME_RINVPASWD; retrying in [0-9.]+ s\)$/
      )
    })
    expect(second.ms).toBeGreaterThanOrEqual(290)
    expect(health[0]!.detail).toContain("0x0e ESME_RINVPASWD")
  })

  it("logs an outage once: WARN when it starts, INFO when a bind ends it, DEBUG for the attempts between", async () => {
    smsc.refuseBinds = true
    const logs: Array<string> = []
    await withProvider(
      testSettings([routeTo(smsc)]),
      new FakeInbox(),
      () =>
        Effect.gen(function* () {
          yield* until("four refused binds", () => smsc.bindsRefused >= 4)
          smsc.refuseBinds = false
          yield* until("the bind", () => smsc.binds === 1)
          smsc.refuseBinds = true
          smsc.dropConnections()
          yield* until("three more refusals", () => smsc.bindsRefused >= 7)
        }),
      logs
    )
    const at = `127\\.0\\.0\\.1:${smsc.port}`
    const states = logs
      .map((l) => JSON.parse(l))
      .filter((l) => String(l.message).startsWith("SMPP"))
      .map((l) => `${l.level} ${l.message}: ${String(l.annotations.detail).replace(/; retrying in [0-9.]+ s$/, "")}`)
    // seven refused binds in two outages: two WARN lines, the other attempts at DEBUG (not captured here)
    expect(smsc.bindsRefused).toBeGreaterThanOrEqual(7)
    expect(states).toEqual([
      expect.stringMatching(new RegExp(`^WARN SMPP route not bound: bind refused by ${at}: 0x0d ESME_RBINDFAIL$`)),
      expect.stringMatching(new RegExp(`^INFO SMPP bound: bound to ${at} as sim$`)),
      expect.stringMatching(
        new RegExp(`^WARN SMPP route not bound: connection to ${at} lost \\((closed by the SMSC|ECONNRESET)\\)$`)
      )
    ])
  })

  it("says when the SMSC cannot be reached at all", async () => {
    const port = smsc.port
    await smsc.stop()
    const health = await withProvider(testSettings([routeTo(smsc)], { responseTimeoutMs: 300 }), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        yield* until("a failed attempt", () => Effect.runSync(p.health)[0]!.detail.includes("retrying"))
        return yield* p.health
      })
    )
    expect(health[0]!.detail).toMatch(
      new RegExp(`^cannot connect to 127\\.0\\.0\\.1:${port}: ECONNREFUSED; retrying in `)
    )
  })
})

describe("keeping the bind alive", () => {
  it("sends enquire_link every interval and stays bound", async () => {
    const settings = testSettings([routeTo(smsc)])
    const health = await withProvider(
      { ...settings, timing: { ...settings.timing, enquireLinkIntervalMs: 50 } },
      new FakeInbox(),
      (p) =>
        Effect.gen(function* () {
          yield* until("three enquire_link", () => smsc.enquireLinks >= 3)
          return yield* p.health
        })
    )
    expect(health[0]!.connected).toBe(true)
    expect(smsc.binds).toBe(1)
  })

  it("closes a connection that does not answer enquire_link, and binds again", async () => {
    smsc.answerEnquireLinks = false
    const logs: Array<string> = []
    const settings = testSettings([routeTo(smsc)], { responseTimeoutMs: 200 })
    await withProvider(
      { ...settings, timing: { ...settings.timing, enquireLinkIntervalMs: 50 } },
      new FakeInbox(),
      () => until("a second bind", () => smsc.binds >= 2),
      logs
    )
    expect(logs.some((l) => l.includes("lost (no enquire_link_resp within 200 ms)"))).toBe(true)
  })
})

describe("health", () => {
  it("says bound, with the address and the account", async () => {
    const health = await withProvider(testSettings([routeTo(smsc)]), new FakeInbox(), (p) =>
      Effect.gen(function* () {
        yield* until("the bind", () => smsc.binds === 1 && Effect.runSync(p.health)[0]!.connected)
        return yield* p.health
      })
    )
    expect(health).toEqual([
      { route: "smsc", connected: true, detail: `bound to 127.0.0.1:${smsc.port} as sim`, slot: { held: 0, of: 1 } }
    ])
  })
})
