/**
 * `node bench/experiments.ts [seconds] [filter]` (DATABASE_URL as for `npm run bench`; a filter
 * keeps the scripts whose name contains it; BENCH_KEEP_DB=1 keeps the database): pgbench what-ifs
 * for src changes, on a fresh database migrated by the service: the admission transaction as the
 * service orders it vs. with the idempotency store before the lot lock vs. also with a one-statement
 * reservation; settlement as the service does it vs. store before consume vs. 100 per transaction.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createOrg, firstLotOf } from "./admin.ts"
import type { OrgWithLot } from "./context.ts"
import { runPgbench } from "./pgbench.ts"
import { createDatabase, dropDatabase, query, runFile, scalar, withDatabase } from "./psql.ts"
import { startService } from "./service.ts"

const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "") {
  process.stderr.write("needs DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/postgres\n")
  process.exit(2)
}
const seconds = Number(process.argv[2] ?? 10)
const filter = process.argv[3] ?? ""
const selected = (script: string) => script.includes(filter)
const dbName = `sms_bench_exp_${Date.now()}_${process.pid}`
const url = withDatabase(adminUrl, dbName)
const lines: Array<string> = [
  "| what-if | clients | tps | messages/s | p50 ms | p99 ms |",
  "|---|---:|---:|---:|---:|---:|"
]
const row = (what: string, clients: number, tps: number, perTx: number, p50: number, p99: number) =>
  lines.push(`| ${what} | ${clients} | ${tps} | ${Math.round(tps * perTx)} | ${p50} | ${p99} |`)

await createDatabase(adminUrl, dbName)
try {
  const service = await startService({ databaseUrl: url, logDir: mkdtempSync(join(tmpdir(), "sms-bench-exp-")) })
  const withLot = async (name: string): Promise<OrgWithLot> => {
    const org = await createOrg(service, name, 1_000_000_000)
    return { ...org, lot: await scalar(url, firstLotOf(org.id)) }
  }
  const admissionOrg = await withLot("experiments admission")
  const settleOrg = await withLot("experiments settle")
  await service.stop()

  for (const clients of [10, 32]) {
    for (const script of [
      "admission",
      "experiments/admission-store-first",
      "experiments/admission-merged-reserve",
      "experiments/admission-fewer-statements"
    ].filter(selected)) {
      const vars = { org: admissionOrg.id, keyid: admissionOrg.keyId, lot: admissionOrg.lot }
      await query(url, "VACUUM ANALYZE")
      const r = await runPgbench({ url, script, vars, clients, durationS: seconds })
      row(script, clients, r.tps, 1, r.p50Ms, r.p99Ms)
    }
  }

  const settle = async (script: string, messages: number, perTx: number, clients: number) => {
    if (!selected(script)) return
    await runFile(url, join(import.meta.dirname, "sql", "seed-due.sql"), {
      org: settleOrg.id,
      lot: settleOrg.lot,
      n: messages,
      due: new Date(Date.now() - 1000).toISOString()
    })
    await runPgbench({ url, script: "claim", vars: {}, clients: 1, transactions: Math.ceil(messages / 100) })
    await query(
      url,
      `DROP TABLE IF EXISTS bench_settle; DROP SEQUENCE IF EXISTS bench_settle_seq;
      CREATE TABLE bench_settle AS SELECT row_number() OVER () AS n, id FROM messages
        WHERE organisation_id = '${settleOrg.id}' AND status = 'processing';
      CREATE UNIQUE INDEX ON bench_settle (n); CREATE SEQUENCE bench_settle_seq;`
    )
    await query(url, "VACUUM ANALYZE")
    const r = await runPgbench({
      url,
      script,
      vars: { org: settleOrg.id },
      clients,
      transactions: messages / perTx / clients
    })
    row(script, clients, r.tps, perTx, r.p50Ms, r.p99Ms)
  }
  // alternated, as each run leaves a bigger database behind
  await settle("experiments/settle", 5000, 1, 10)
  await settle("experiments/settle-store-first", 5000, 1, 10)
  await settle("experiments/settle", 5000, 1, 10)
  await settle("experiments/settle-store-first", 5000, 1, 10)
  await settle("experiments/settle-batch", 20000, 100, 2)
} finally {
  if (process.env["BENCH_KEEP_DB"] === "1") process.stderr.write(`kept database ${dbName}\n`)
  else await dropDatabase(adminUrl, dbName)
}
process.stdout.write(`${lines.join("\n")}\n`)
