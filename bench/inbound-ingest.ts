/**
 * `DATABASE_URL=postgres://... npm run bench:inbound [-- --smoke] [--count=N] [--rounds=R]`: how fast
 * the service takes mobile-originated messages (MO) in, beside how fast it takes delivery receipts
 * in, through the same SMPP connection of the same SMSC simulator, in the same run
 * (docs/two-way.md#ingest-every-part-stored-before-it-is-acknowledged).
 *
 * A service process (SMS_PROVIDER=smpp, on a fresh database on DATABASE_URL's server) binds to an
 * SMSC simulator run in this process, so that the simulator's clock times each `deliver_sm` to its
 * `deliver_sm_resp`. Each round:
 * - receipts: `count` messages sent through the public API, their receipts held by the simulator
 *   until every message is taken, then released at once; timed until every receipt is answered
 *   with status 0 (stored by the service);
 * - MO: `count` single-part MO from distinct mobiles to the organisation's dedicated number, all at
 *   once; timed until every one is answered with status 0 (stored, before its answer).
 * Both go through the simulator's window of 64 `deliver_sm` awaiting their answer. Prints each
 * round's rates, the median ratio MO / receipts (target >= 0.8), and the p99 of the MO's answer
 * delays (target <= 100 ms) beside the receipts'.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { Smsc } from "../simulator/smsc/Smsc.ts"
import { createOrg } from "./admin.ts"
import { jsonHeaders, messagesPath } from "./context.ts"
import { createDatabase, dropDatabase, withDatabase } from "./psql.ts"
import { type Service, startService } from "./service.ts"
import { percentile, round } from "./stats.ts"

const adminUrl = process.env.DATABASE_URL
if (adminUrl === undefined) {
  process.stderr.write("set DATABASE_URL to a PostgreSQL server the bench may create a database on\n")
  process.exit(1)
}
const flag = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const smoke = process.argv.includes("--smoke")
const count = Number(flag("count") ?? (smoke ? 200 : 3000))
const rounds = Number(flag("rounds") ?? (smoke ? 1 : 3))
/** Concurrent API sends while the receipts' messages go out. */
const sendConcurrency = 32
const inboundNumber = "4242"

const until = async (what: string, check: () => boolean, timeoutMs: number): Promise<void> => {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(2)
  }
}

const admin = async (service: Service, method: string, path: string, body: unknown): Promise<void> => {
  const res = await fetch(`${service.base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
}

/** A Malagasy mobile number that no simulator test number is: `+26133` and seven digits. */
const mobile = (i: number): string => `+26133${String(1_000_000 + i).slice(-7)}`

interface Round {
  readonly receiptsPerSecond: number
  readonly moPerSecond: number
}

const database = `sms_bench_inbound_${Date.now()}`
const logDir = mkdtempSync(join(tmpdir(), "sms-bench-inbound-"))
await createDatabase(adminUrl, database)
const smsc = await Smsc.start({ port: 0, receiptDelayMs: 0, receiptRetryMs: 30_000 })
const delays = { receipt: [] as Array<number>, mo: [] as Array<number> }
smsc.answerDelays = delays
const results: Array<Round> = []
try {
  const service = await startService({
    databaseUrl: withDatabase(adminUrl, database),
    logDir,
    env: { SMS_PROVIDER: "smpp", SMS_SMPP_URL: smsc.url() }
  })
  try {
    const org = await createOrg(service, "bench inbound", count * rounds + 10)
    await admin(service, "PUT", `/organizations/${org.id}/inbound-numbers/${inboundNumber}`, {})
    let sent = 0
    for (let r = 0; r < rounds; r++) {
      // receipts: the messages go out through the API, their receipts kept, then all released at once
      smsc.holdReceipts = true
      const taken = smsc.messages.length
      let next = 0
      await Promise.all(
        Array.from({ length: sendConcurrency }, async () => {
          while (next < count) {
            const i = next++
            const res = await fetch(`${service.base}${messagesPath}`, {
              method: "POST",
              headers: { ...jsonHeaders(org), "idempotency-key": `inbound-bench-${r}-${i}` },
              body: JSON.stringify({ to: mobile(i), text: "Bench receipt" })
            })
            if (res.status !== 201) throw new Error(`send: ${res.status} ${await res.text()}`)
            await res.arrayBuffer()
          }
        })
      )
      await until("every message taken", () => smsc.messages.length - taken >= count, 60_000)
      smsc.holdReceipts = false
      const answered = smsc.receiptAnswers.length
      const receiptsAt = performance.now()
      if (smsc.releaseReceipts() !== count) throw new Error("the simulator held another number of receipts")
      await until("every receipt answered", () => smsc.receiptAnswers.length - answered >= count, 120_000)
      const receiptsPerSecond = count / ((performance.now() - receiptsAt) / 1000)

      // MO: one short text from each of `count` mobiles to the organisation's number, all at once
      const moAnswered = smsc.mobileOriginatedAnswers.length
      const moAt = performance.now()
      for (let i = 0; i < count; i++) {
        smsc.sendMobileOriginated({ from: mobile(sent + i), to: inboundNumber, text: "Misaotra tompoko" })
      }
      await until("every MO answered", () => smsc.mobileOriginatedAnswers.length - moAnswered >= count, 120_000)
      const moPerSecond = count / ((performance.now() - moAt) / 1000)
      sent += count
      const refused =
        smsc.receiptAnswers.slice(answered).filter((a) => a.status !== 0).length +
        smsc.mobileOriginatedAnswers.slice(moAnswered).filter((s) => s !== 0).length
      if (refused > 0) throw new Error(`${refused} deliver_sm answered with an error status`)
      results.push({ receiptsPerSecond, moPerSecond })
      process.stdout.write(
        `round ${r + 1}: receipts ${round(receiptsPerSecond)}/s, MO ${round(moPerSecond)}/s, ratio ${round(moPerSecond / receiptsPerSecond, 2)}\n`
      )
    }
  } finally {
    await service.stop()
  }
} finally {
  await smsc.dispose()
  await dropDatabase(adminUrl, database)
}

const ratio = percentile(
  results.map((r) => r.moPerSecond / r.receiptsPerSecond),
  0.5
)
const moP99 = percentile(delays.mo, 0.99)
process.stdout.write(
  `${JSON.stringify({
    count,
    rounds,
    receipts_per_second: results.map((r) => round(r.receiptsPerSecond)),
    mo_per_second: results.map((r) => round(r.moPerSecond)),
    mo_vs_receipts_median: round(ratio, 2),
    mo_vs_receipts_target: ">= 0.8",
    mo_answer_p99_ms: round(moP99),
    mo_answer_p99_target_ms: "<= 100",
    receipt_answer_p99_ms: round(percentile(delays.receipt, 0.99)),
    mo_answer_p50_ms: round(percentile(delays.mo, 0.5)),
    logs: logDir
  })}\n`
)
