/**
 * `kill -9` of the SMSC simulator for 5 s under 200 SMPP sends (issue 18, items 9 and 12): a
 * service process on SMPP sends 200 immediate messages to distinct ordinary numbers, 20 at a
 * time, to a simulator that answers 0.1 s after taking a message; once a quarter are answered
 * the simulator process is killed with -9 (the answers of the messages it holds die with it),
 * kept down 5 s, and started again on the same port and data directory, while the sends go on.
 * What must hold:
 *
 * - no send fails 503 (dispatch_unavailable or service_unavailable) nor 500: a send waits for
 *   the bind up to its deadline, and the adapter binds again within seconds of the restart; a
 *   send whose answer died with the SMSC is 502 provider_result_unknown;
 * - no number was taken twice by the SMSC (its journal);
 * - every receipt is applied: every message the SMSC took ends `delivered` under its id, those
 *   whose answer was lost through `unknown>accepted@matched_receipt` (the restarted simulator
 *   sends the receipts its journal says it owes); no receipt stays matched to nothing;
 * - the ledger is exact.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { serve } from "../support/ServedProcess.ts"
import { freePort } from "../support/ServiceProcess.ts"
import { type SmscProcess, startSmscProcess, takenMessages } from "../support/SmscProcess.ts"
import { kill9 } from "../support/SimulatorProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { codeOf, type Exchange, exchange } from "./support/Operations.ts"
import { ledgerProblems, readFacts, statusCounts, withDatabase } from "./support/Outcomes.ts"
import { pendingReceipts, restsAsTaken, takenByNumber, takenProblems } from "./support/SmscOutcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { timelinesWhen, went } from "./support/Timelines.ts"
import { timelineEntriesSql } from "../support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-smpp-smsc-kill9")

const sends = 200
const clients = 20
const answersBeforeKill = 50
const downMs = 5_000
const atRestTimeoutMs = 60_000

const number = (i: number) => `+26134${String(2_000_000 + i).padStart(7, "0")}`
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Messages accepted before `acceptedBefore` and delivered after `deliveredAfterMs` (their receipt was owed across the restart). */
const deliveredAfter = (url: string, acceptedBefore: number, deliveredAfterMs: number): Promise<number> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: number }>`WITH e AS (${sql.literal(timelineEntriesSql)})
      SELECT count(*)::integer AS n FROM e AS a
      JOIN e AS d ON d.organisation_id = a.organisation_id AND d.message_id = a.message_id AND d.to_status = 'delivered'
      WHERE a.to_status = 'accepted' AND a.at < ${new Date(acceptedBefore)} AND d.at > ${new Date(deliveredAfterMs)}`
      return row!.n
    })
  )

describe("kill -9 of the SMSC simulator for 5 s under 200 SMPP sends", () => {
  it("fails no send 503, takes none twice, applies every receipt, keeps the ledger exact", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "faults-smsc-"))
    const smscPort = await freePort()
    // answers 0.1 s after taking a message: at the kill, the answers of the messages in its window are lost.
    // Receipts 3 s after: longer than from the first answer to the kill, so every message taken before
    // the kill still has its receipt owed then (with 0.5 s, one run had them all sent before the kill)
    const smscEnv = { SMS_SIMULATOR_RECEIPT_DELAY_MS: "3000", SMS_SMSC_RESPONSE_DELAY_MS: "100" }
    let smsc: SmscProcess = await startSmscProcess(smscPort, dataDir, smscEnv)
    try {
      const served = await serve({
        DATABASE_URL: postgres().url,
        SMS_PROVIDER: "smpp",
        SMS_SMPP_URL: `smpp://sim:sim@127.0.0.1:${smscPort}`,
        SMS_VERIFY_INTERVAL_MS: "1000"
      })
      const { orgId, apiKey } = await served.newOrg({ credits: 1000 })

      const answers: Array<Exchange & { readonly to: string }> = []
      const outage = { killedAt: 0, restartedAt: 0, listeningAt: 0 }
      let restart: Promise<void> | undefined
      const start = Date.now()
      let next = 0
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (next < sends) {
            const to = number(next++)
            answers.push({
              to,
              ...(await exchange(served, "POST", "/api/sms/v2/messages/", {
                token: apiKey,
                headers: { "idempotency-key": `smsc-kill9-${to}` },
                body: { to, text: "Fault suite: the SMSC killed under SMPP sends" }
              }))
            })
            if (restart === undefined && answers.length >= answersBeforeKill) {
              restart = (async () => {
                await kill9(smsc)
                outage.killedAt = Date.now()
                await sleep(downMs)
                outage.restartedAt = Date.now()
                smsc = await startSmscProcess(smscPort, dataDir, smscEnv)
                outage.listeningAt = Date.now()
              })()
            }
            // a steady flow rather than one burst, so that sends start before, during and after the outage
            await sleep(150)
          }
        })
      )
      await restart
      const loadEnd = Date.now()
      expect(outage.listeningAt, "the SMSC killed and started again mid-load").toBeGreaterThan(0)

      const taken = takenByNumber(takenMessages(dataDir))
      const timelines = await timelinesWhen(postgres().url, [orgId], sends, restsAsTaken(taken), atRestTimeoutMs)
      const atRestAt = Date.now()

      const answerOf = (a: Exchange) =>
        a.status === undefined ? `closed: ${a.closed}` : `${a.status} ${codeOf(a) ?? ""}`.trim()
      const refused = answers.filter(
        (a) => a.status !== 201 && !(a.status === 502 && codeOf(a) === "provider_result_unknown")
      )
      expect
        .soft(
          refused.map((a) => `${a.to}: ${answerOf(a)} ${JSON.stringify(a.body)}`),
          "answers neither 201 nor 502 provider_result_unknown"
        )
        .toEqual([])
      expect.soft(timelines.length, "messages").toBe(sends)
      expect.soft(takenProblems(timelines, taken), "messages against what the SMSC took").toEqual([])
      // a send whose write the dying SMSC never read cannot be delivered: it must be rare, and unknown
      const neverTaken = timelines.filter((m) => !taken.has(m.toNumber))
      expect.soft(neverTaken.length, "messages the SMSC never took").toBeLessThanOrEqual(clients)
      expect.soft(await pendingReceipts(postgres().url), "receipts matched to no message").toBe(0)
      expect.soft(ledgerProblems(await readFacts(postgres().url)), "ledger").toEqual([])
      // what the scenario is for: answers lost with the SMSC, receipts it owed across its restart
      const lostAnswers = timelines.filter((m) => went(m, "unknown>accepted@matched_receipt")).length
      const owedAcross = await deliveredAfter(postgres().url, outage.killedAt, outage.listeningAt)
      expect.soft(lostAnswers, "messages whose answer died with the SMSC").toBeGreaterThan(0)
      expect
        .soft(owedAcross, "messages accepted before the kill, delivered by a receipt after the restart")
        .toBeGreaterThan(0)

      const during = answers.filter((a) => a.sentAt >= outage.killedAt && a.sentAt <= outage.listeningAt)
      printFigures("smpp-smsc-kill9", {
        sends,
        down_s: seconds(outage.restartedAt - outage.killedAt),
        smsc_listening_again_after_kill_s: seconds(outage.listeningAt - outage.killedAt),
        load_s: seconds(loadEnd - start),
        answers: statusCounts(answers.map((a) => ({ status: answerOf(a) }))),
        sent_while_down: during.length,
        slowest_answer_s: seconds(Math.max(...answers.map((a) => a.answeredAt - a.sentAt))),
        all_at_rest_after_restart_s: seconds(atRestAt - outage.listeningAt),
        statuses: statusCounts(timelines),
        taken_by_smsc: taken.size,
        taken_twice: [...taken.values()].filter((t) => t.length > 1).length,
        answer_lost_then_matched_by_receipt: lostAnswers,
        accepted_before_kill_delivered_after_restart: owedAcross,
        never_taken: neverTaken.length
      })
    } finally {
      await kill9(smsc)
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
