/**
 * `kill -9` of a service process on SMPP under 300 concurrent sends (issue 18, item 5): the SMSC
 * simulator runs as a process of its own (its journal in a temporary directory); 300 immediate
 * sends to distinct ordinary numbers go at once; the service is killed once the SMSC has
 * answered half of them (its journal says), with more in flight; a new process starts on the
 * same database. What must hold, once every message is
 * at rest (bounded):
 *
 * - every message the SMSC took (its journal) ends `delivered` under the id the SMSC gave it:
 *   by its answer, or, where the answer died with the process, by its receipt
 *   (`unknown>accepted@matched_receipt`); none is left `unknown` whose receipt arrived, and no
 *   receipt stays matched to nothing;
 * - a message the SMSC never took ends `unknown`, or `failed` when it provably never left;
 * - no number was taken twice (nothing submitted again); every answer given before the kill is
 *   201 or 502 provider_result_unknown, never 500; the ledger is exact.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { serve } from "../support/ServedProcess.ts"
import { freePort } from "../support/ServiceProcess.ts"
import { startSmscProcess, takenMessages } from "../support/SmscProcess.ts"
import { kill9 } from "../support/SimulatorProcess.ts"
import { printFigures, seconds } from "./support/Figures.ts"
import { codeOf, type Exchange, exchange } from "./support/Operations.ts"
import { ledgerProblems, readFacts, statusCounts } from "./support/Outcomes.ts"
import { pendingReceipts, restsAsTaken, takenByNumber, takenProblems } from "./support/SmscOutcomes.ts"
import { useThrowawayPostgres } from "./support/Suite.ts"
import { timelinesWhen, went } from "./support/Timelines.ts"

const postgres = useThrowawayPostgres("faults-smpp-service-kill9")

const sends = 300
const answeredBySmscBeforeKill = 150
/** The lease (8 s), a recovery round, the verifier's backoff from 1 s, with room for a loaded machine. */
const atRestTimeoutMs = 90_000

const number = (i: number) => `+26134${String(1_000_000 + i).padStart(7, "0")}`

describe("kill -9 of a service process under 300 concurrent SMPP sends, then a new process", () => {
  it("delivers every message the SMSC took, under its id, submits none twice, keeps the ledger exact", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "faults-smsc-"))
    const smscPort = await freePort()
    const smsc = await startSmscProcess(smscPort, dataDir, { SMS_SIMULATOR_RECEIPT_DELAY_MS: "500" })
    try {
      const env = {
        DATABASE_URL: postgres().url,
        SMS_PROVIDER: "smpp",
        SMS_SMPP_URL: `smpp://sim:sim@127.0.0.1:${smscPort}`,
        SMS_VERIFY_INTERVAL_MS: "1000"
      }
      const first = await serve(env)
      const { orgId, apiKey } = await first.newOrg({ credits: 1000 })

      // killed once the SMSC has answered half of them: its answers to the next ones are in flight
      const answers: Array<Exchange & { readonly to: string }> = []
      let killedAt = 0
      let takenAtKill = 0
      const killer = setInterval(() => {
        takenAtKill = takenMessages(dataDir).length
        if (killedAt !== 0 || takenAtKill < answeredBySmscBeforeKill) return
        first.started.child.kill("SIGKILL")
        killedAt = Date.now()
      }, 5)
      const start = Date.now()
      await Promise.all(
        Array.from({ length: sends }, async (_, i) => {
          const to = number(i)
          const answer = await exchange(first, "POST", "/api/sms/v2/messages/", {
            token: apiKey,
            headers: { "idempotency-key": `smpp-kill9-${i}` },
            body: { to, text: "Fault suite: kill -9 under SMPP sends" }
          })
          answers.push({ to, ...answer })
        })
      )
      clearInterval(killer)
      expect(killedAt, "the process was killed mid-load").toBeGreaterThan(0)
      expect(await first.started.exited, "killed by a signal").toBeNull()
      const before = answers.filter((a) => a.status !== undefined && a.answeredAt <= killedAt)
      const cut = answers.filter((a) => !before.includes(a))
      expect(cut.length, "requests cut by the kill").toBeGreaterThan(0)

      const second = await serve(env)
      const restartedAt = Date.now()
      // the first process is gone: what the SMSC took is all it will take
      const taken = takenByNumber(takenMessages(dataDir))
      const timelines = await timelinesWhen(postgres().url, [orgId], 0, restsAsTaken(taken), atRestTimeoutMs)
      const atRestAt = Date.now()
      expect(takenByNumber(takenMessages(dataDir)).size, "taken after the restart").toBe(taken.size)

      expect.soft(takenProblems(timelines, taken), "messages against what the SMSC took").toEqual([])
      expect.soft(await pendingReceipts(postgres().url), "receipts matched to no message").toBe(0)
      const wrongAnswers = before.filter(
        (a) => !(a.status === 201 || (a.status === 502 && codeOf(a) === "provider_result_unknown"))
      )
      expect
        .soft(
          wrongAnswers.map((a) => `${a.to}: ${a.status} ${JSON.stringify(a.body)}`),
          "answers before the kill"
        )
        .toEqual([])
      const facts = await readFacts(postgres().url)
      expect.soft(ledgerProblems(facts), "ledger").toEqual([])
      expect.soft((await second.call("GET", "/health")).status).toBe(200)

      printFigures("smpp-service-kill9", {
        sends,
        answered_before_kill: before.length,
        cut_by_kill: cut.length,
        kill_after_s: seconds(killedAt - start),
        taken_by_smsc_at_kill: takenAtKill,
        new_process_serving_after_s: seconds(restartedAt - killedAt),
        all_at_rest_after_kill_s: seconds(atRestAt - killedAt),
        messages: timelines.length,
        taken_by_smsc: taken.size,
        taken_twice: [...taken.values()].filter((t) => t.length > 1).length,
        statuses: statusCounts(timelines),
        recovered: timelines.filter((m) => m.events.some((e) => e.endsWith("@recovery"))).length,
        matched_by_receipt: timelines.filter((m) => went(m, "unknown>accepted@matched_receipt")).length,
        never_taken_unknown: timelines.filter((m) => !taken.has(m.toNumber) && m.status === "unknown").length,
        never_taken_failed: timelines.filter((m) => !taken.has(m.toNumber) && m.status === "failed").length,
        receipts_matched_to_nothing: await pendingReceipts(postgres().url)
      })
    } finally {
      await kill9(smsc)
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
