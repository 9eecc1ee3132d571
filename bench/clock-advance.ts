/**
 * `npm run bench:clock`: how long the test clock takes to advance by one day while messages stay
 * `unknown` for good (+261340000009), on the embedded database in memory. The service runs as a
 * separate process (`SMS_CLOCK=test`, default `SMS_VERIFY_INTERVAL_MS`); the baseline of the same
 * run is the same advance with no unknown message. Prints one line per phase with the provider
 * queries it cost (sms_provider_queries_total) and its ratio to the baseline. Target of issue 22:
 * a day with 100 unknown messages answers in <= 2 s. `--messages=N` changes the 100; `--cpu-prof`
 * profiles the service (bench/results/, summarised by bench/profile.ts).
 */
import { mkdtempSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { createOrg } from "./admin.ts"
import { startService } from "./service.ts"
import { round } from "./stats.ts"

const unknownCount = Number(process.argv.find((a) => a.startsWith("--messages="))?.slice("--messages=".length) ?? 100)
/** `--no-month` leaves out the 30-day advance (which takes ~30 first days where every check is hourly or faster). */
const month = !process.argv.includes("--no-month")
const day = 86_400
const targetSeconds = 2

const service = await startService({
  databaseUrl: undefined,
  logDir: mkdtempSync(join(tmpdir(), "sms-bench-clock-")),
  env: { SMS_CLOCK: "test" },
  ...(process.argv.includes("--cpu-prof")
    ? { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${join(import.meta.dirname, "results")}`] }
    : {})
})

const admin = (path: string, body: unknown) =>
  fetch(`${service.base}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** The provider queries answered so far, all results together. */
const queries = async (): Promise<number> => {
  const text = await (
    await fetch(`${service.base}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } })
  ).text()
  return text
    .split("\n")
    .filter((line) => line.startsWith("sms_provider_queries_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0)
}

/** Advances the clock by `seconds` and measures the answer's wall time and the queries it cost. */
const advance = async (seconds: number) => {
  const before = await queries()
  const started = performance.now()
  const res = await admin("/clock/advance", { seconds })
  const elapsed = (performance.now() - started) / 1000
  if (res.status !== 200) throw new Error(`advance: ${res.status} ${await res.text()}`)
  return { seconds: round(elapsed, 3), queries: (await queries()) - before }
}

try {
  const org = await createOrg(service, "bench clock", unknownCount)
  const load = [loadavg()[0]]
  const baseline = await advance(day)
  // immediate sends to the unknown-for-good number: each answers 502 provider_result_unknown
  for (let i = 0; i < unknownCount; i += 10) {
    await Promise.all(
      Array.from({ length: Math.min(10, unknownCount - i) }, (_, j) =>
        fetch(`${service.base}/api/sms/v2/messages/`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${org.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": `clock-${i + j}`
          },
          body: JSON.stringify({ to: "+261340000009", text: "bench" })
        }).then(async (res) => {
          if (res.status !== 502) throw new Error(`send: ${res.status} ${await res.text()}`)
        })
      )
    )
  }
  const first = await advance(day)
  const second = await advance(day)
  const thirty = month ? await advance(30 * day) : undefined
  load.push(loadavg()[0])
  const rows = [
    ["advance 1 day, no unknown message (baseline)", baseline],
    [`advance 1 day, ${unknownCount} unknown for good (their first day)`, first],
    [`advance 1 day more (their second day)`, second],
    ...(thirty === undefined ? [] : [["advance 30 days more", thirty] as const])
  ] as const
  process.stdout.write(
    `clock advance on the embedded database (load ${load.map((l) => round(l ?? 0, 1)).join(" -> ")})\n`
  )
  process.stdout.write("| phase | seconds | provider queries | ratio to baseline |\n|---|---:|---:|---:|\n")
  for (const [name, r] of rows) {
    process.stdout.write(`| ${name} | ${r.seconds} | ${r.queries} | ${round(r.seconds / baseline.seconds, 1)} |\n`)
  }
  process.stdout.write(
    `first day: ${first.seconds} s, target <= ${targetSeconds} s: ${first.seconds <= targetSeconds ? "ok" : "MISSED"}\n`
  )
} finally {
  await service.stop()
}
