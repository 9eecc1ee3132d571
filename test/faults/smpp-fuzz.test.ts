/**
 * The SMPP fuzz under load (issue 18): a service process (`node src/main.ts`, SMS_PROVIDER=smpp,
 * the suite's own PostgreSQL) bound to a hostile SMSC run here (smpp/HostileSmsc.ts), under a
 * steady load of immediate sends and a scheduled batch, each to a number of its own. The SMSC
 * answers most submits normally and sends their valid receipts, and mixes into the same TCP
 * writes every command id of SMPP 3.4, random octets framed as PDUs, PDUs with fields cut, long
 * and empty fields, unreadable receipts, receipts of no message; it answers some submits with an
 * id the service cannot keep, refuses a few, and every few seconds drops the connection with a
 * PDU under 16 or over 16,384 octets, one longer than what follows, or an `unbind`. What must
 * hold:
 *
 * - the process never exits and `/health` answers; no request is answered 500 or left without
 *   an answer; each immediate send's answer is the one its message's path gives;
 * - each message ends by its normal path: taken under a usable id, it ends as its receipt says
 *   (through `processing>accepted@provider`, or, when the answer was lost with a dropped
 *   connection, through `unknown>accepted@matched_receipt`), with that id; refused, `failed`;
 *   given an id the service cannot keep, or never read by the SMSC (its write lost with a
 *   dropped connection), `unknown`; and only those end `unknown`; none is submitted twice;
 * - every request of the SMSC gets the answer SMPP 3.4 gives it (deliver_sm_resp / data_sm_resp
 *   status 0 for receipts, valid or unreadable, 0x64 allowed for a stored one the adapter has no
 *   room for, which is sent again; generic_nack for what an ESME does not take; nothing for
 *   alert_notification and outbind), unless its connection was dropped by our PDU within 10 s;
 *   no connection closes but by such a PDU;
 * - the ledger is exact.
 *
 * Seeded: FUZZ_SEED replays the same choices (their interleaving with the service's timing
 * differs); the seed is printed with the figures.
 */
import { describe, expect, it } from "vitest"
import { serve } from "../support/ServedProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { codeOf, exchange, resourceOf } from "./support/Operations.ts"
import { ledgerProblems, readFacts, statusCounts } from "./support/Outcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { type Timeline, timelinesWhen, went } from "./support/Timelines.ts"
import { HostileSmsc } from "./smpp/HostileSmsc.ts"
import { Prng } from "./smpp/Prng.ts"
import { expectedStatuses, pathProblems, type Send, sendProblems } from "./smpp/Verdict.ts"

const postgres = useThrowawayPostgres("faults-smpp-fuzz")

const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000_007)
const loadMs = 20_000
const clients = 4
const batchSize = 150
/** Between two writes of the SMSC. */
const tickMs = 100
const settleTimeoutMs = 60_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const immediateNumber = (i: number) => `+26133${String(i).padStart(7, "0")}`
const batchNumber = (i: number) => `+26132${String(i).padStart(7, "0")}`

describe("the SMPP fuzz: a hostile SMSC under load", () => {
  it("never ends the process, answers no 500, ends every message by its normal path, answers every request as SMPP 3.4 says", async () => {
    console.log(`[smpp fuzz] seed ${seed} (FUZZ_SEED=${seed} replays its choices)`)
    const prng = new Prng(seed)
    const smsc = await HostileSmsc.start(prng)
    const served = await serve({
      DATABASE_URL: postgres().url,
      SMS_PROVIDER: "smpp",
      SMS_SMPP_URL: smsc.raw.url,
      SMS_VERIFY_INTERVAL_MS: "1000"
    })
    /** How the process ended, if it has. */
    const exitedYet = () =>
      Promise.race([served.started.exited.then((code) => `exited with ${code}`), sleep(100).then(() => undefined)])
    try {
      const { orgId, apiKey } = await served.newOrg({ credits: 100_000 })
      let ticking = true
      const ticks = (async () => {
        while (ticking) {
          smsc.tick()
          await sleep(tickMs)
        }
      })()

      const start = Date.now()
      const batch = await exchange(served, "POST", "/api/sms/v2/message-batches/", {
        token: apiKey,
        headers: { "idempotency-key": `fuzz-batch-${seed}` },
        body: {
          recipients: Array.from({ length: batchSize }, (_, i) => batchNumber(i)),
          text: "SMPP fuzz: scheduled",
          send_at: new Date(start + 5_000).toISOString()
        }
      })
      expect(batch.status, JSON.stringify(batch.body)).toBe(202)
      const sends: Array<Send> = []
      let next = 0
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() - start < loadMs) {
            const to = immediateNumber(next++)
            sends.push({
              to,
              ...(await exchange(served, "POST", "/api/sms/v2/messages/", {
                token: apiKey,
                headers: { "idempotency-key": `fuzz-${seed}-${to}` },
                body: { to, text: "SMPP fuzz: immediate" }
              }))
            })
            await sleep(20)
          }
        })
      )
      const loadEnd = Date.now()
      smsc.killing = false
      // the process lives: nothing the SMSC sent ended it
      expect(await exitedYet(), "the service process after the load").toBeUndefined()

      const created = sends.filter((s) => resourceOf(s) !== undefined).length + batchSize
      const timelines = await timelinesWhen(
        postgres().url,
        [orgId],
        created,
        (m) => expectedStatuses(smsc, m.toNumber).includes(m.status),
        settleTimeoutMs
      )
      expect.soft(timelines.length, "messages created").toBe(created)
      // the SMSC's last requests answered, every owed receipt acknowledged
      const answersDeadline = Date.now() + 30_000
      while ((smsc.owedLeft > 0 || smsc.answersOwed > 0) && Date.now() < answersDeadline) await sleep(200)
      const settledAt = Date.now()
      ticking = false
      await ticks

      // the process still lives and serves
      expect(await exitedYet(), "the service process at the end").toBeUndefined()
      expect((await served.call("GET", "/health")).status).toBe(200)

      // every answer as its message's path says (never a 500, never a connection closed without
      // one); every message by its normal path, none submitted twice
      expect.soft(sendProblems(sends, timelines), "answers to immediate sends").toEqual([])
      expect.soft(pathProblems(smsc, timelines), "messages off their normal path").toEqual([])
      expect.soft(smsc.answerProblems(), "answers to the SMSC's requests, connections dropped").toEqual([])
      expect.soft(new Set([...smsc.killed.values()].map((k) => k.how)).size, "kinds of drop").toBe(4)
      expect.soft(smsc.raw.binds, "binds: one more than the drops").toBe(smsc.killed.size + 1)
      expect.soft(smsc.owedLeft, "owed receipts not acknowledged").toBe(0)
      const notDrawn = smsc.junkLabels.filter((label) => !smsc.written.has(label))
      expect.soft(notDrawn, "junk kinds never sent").toEqual([])
      expect.soft(ledgerProblems(await readFacts(postgres().url)), "ledger").toEqual([])
      const errors = served.started
        .output()
        .stdout.split("\n")
        .filter((line) => line.includes('"level":"ERROR"'))
      expect.soft(errors, "ERROR lines of the service").toEqual([])

      const submits = [...smsc.submits.values()].map((list) => list[0]!)
      const count = (f: (m: Timeline) => boolean) => timelines.filter(f).length
      printFigures("smpp-fuzz", {
        seed,
        load_s: seconds(loadEnd - start),
        settled_after_load_s: seconds(settledAt - loadEnd),
        immediate_sends: sends.length,
        batch: batchSize,
        answers: statusCounts(sends.map((s) => ({ status: `${s.status ?? "closed"} ${codeOf(s) ?? ""}`.trim() }))),
        statuses: statusCounts(timelines),
        submits: {
          accepted: submits.filter((s) => s.answer === "accepted").length,
          with_64_or_65_character_id: submits.filter((s) => s.answer === "accepted" && s.messageId.length >= 64).length,
          unusable_id: submits.filter((s) => s.answer === "unusable id").length,
          refused: submits.filter((s) => s.answer === "refused").length,
          after_a_wrong_command_response: submits.filter((s) => s.wrongFirst !== undefined).length,
          answer_lost_then_matched_by_receipt: count((m) => went(m, "unknown>accepted@matched_receipt")),
          never_read_by_the_smsc: timelines.length - submits.length,
          answer_due_after_its_connection_closed: smsc.answersNeverWritten
        },
        binds: smsc.raw.binds,
        drops: [...smsc.killed.values()].reduce<Record<string, number>>((by, k) => {
          by[k.how] = (by[k.how] ?? 0) + 1
          return by
        }, {}),
        ...smsc.requestFigures(),
        owed_receipts: smsc.owedCount,
        owed_receipt_copies: smsc.receiptCopies,
        owed_receipts_answered_0x64: smsc.receiptsDeferred,
        answers_to_garbage: smsc.answersToNothing,
        junk_items: smsc.junkLabels.reduce((n, label) => n + (smsc.written.get(label) ?? 0), 0),
        junk_kinds_drawn: smsc.junkLabels.filter((label) => smsc.written.has(label)).length
      })
    } finally {
      await smsc.raw.close()
    }
  })
})
