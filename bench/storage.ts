/**
 * Bytes per delivered message on PostgreSQL (issue 23), `npm run bench:storage` with DATABASE_URL
 * (a server where the bench may create and drop its own database `sms_storage_<time>_<pid>`).
 *
 * The service runs as a separate process on the test clock (SMS_CLOCK=test, receipts at once,
 * SMS_RETENTION_DAYS=3) so that time can be moved: ten batches of 1,000 and 2,000 immediate sends
 * (the mix; `--batches=N --singles=N` to change it; `--live-only` stops after the first
 * state; `--relations` prints each relation's bytes too; `--waves=N` sends the mix in N equal
 * waves, each delivered and then followed by a plain VACUUM, as autovacuum would run between them
 * on a server where it is on: the live state of a service in use rather than after one burst),
 * every one delivered, then measured in three states, each after VACUUM ANALYZE (the files as
 * they are, free space kept for new rows) and after VACUUM FULL (the bytes the rows need: what a
 * table settles to once new rows reuse the space freed):
 * - live: just delivered;
 * - compacted: a day later, receipts and simulator rows removed (still within retention);
 * - erased: past the retention, the personal data erased, the ledger entries folded into totals;
 * - a month later: the simulator's rows gone (31 days), the month's journal partition dropped.
 * Prints one table per state (rows and bytes per message, per table) and writes the figures to
 * bench/results/storage-<time>.json (the service's log goes to the system's temporary directory).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createOrg } from "./admin.ts"
import { batchesPath, jsonHeaders, messagesPath } from "./context.ts"
import { createDatabase, dropDatabase, query, scalar, withDatabase } from "./psql.ts"
import { type Service, startService } from "./service.ts"

const arg = (name: string, fallback: number) => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.split("=")[1])
}

const adminUrl = process.env.DATABASE_URL
if (adminUrl === undefined) {
  process.stderr.write("bench:storage needs DATABASE_URL (a PostgreSQL server where it may create a database)\n")
  process.exit(2)
}
const batches = arg("batches", 10)
/** `--live-only`: the first state alone (with BENCH_KEEP_DB=1, a database to look into). */
const liveOnly = process.argv.includes("--live-only")
const singles = arg("singles", 2000)
const total = batches * 1000 + singles
const waves = arg("waves", 1)
if (!(Number.isInteger(waves) && waves >= 1 && batches % waves === 0 && singles % waves === 0)) {
  process.stderr.write(
    `--waves=${waves} must be a whole number >= 1 dividing --batches=${batches} and --singles=${singles}\n`
  )
  process.exit(2)
}
const dayS = 86_400
const retentionDays = 3

const resultsDir = join(import.meta.dirname, "results")
mkdirSync(resultsDir, { recursive: true })
const stamp = new Date().toISOString().replace(/[:.]/g, "-")
const database = `sms_storage_${Date.now()}_${process.pid}`
const url = withDatabase(adminUrl, database)

const post = async (service: Service, path: string, headers: Record<string, string>, body: unknown, key: string) => {
  const res = await fetch(`${service.base}${path}`, {
    method: "POST",
    headers: { ...headers, "idempotency-key": key },
    body: JSON.stringify(body)
  })
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`)
}

const advance = async (service: Service, seconds: number) => {
  const res = await fetch(`${service.base}/admin/v1/clock/advance`, {
    method: "POST",
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ seconds })
  })
  if (res.status !== 200) throw new Error(`clock advance: ${res.status} ${await res.text()}`)
}

/** Runs `task(i)` for i in 0..n-1, `concurrency` at a time. */
const pool = async (n: number, concurrency: number, task: (i: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++)
    })
  )
}

interface TableFigures {
  readonly table: string
  readonly rows: number
  readonly bytes: number
}

/** Every table of the schema, partitions summed into their parent: exact rows and total bytes. */
const tables = async (): Promise<ReadonlyArray<TableFigures>> => {
  const sizes = await query(
    url,
    `SELECT coalesce(p.relname, c.relname), sum(pg_total_relation_size(c.oid))::bigint
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = i.inhparent
    WHERE n.nspname = 'public' AND c.relkind = 'r' GROUP BY 1 ORDER BY 2 DESC`
  )
  const out: Array<TableFigures> = []
  for (const [table, bytes] of sizes) {
    const rows = Number(await scalar(url, `SELECT count(*) FROM ${table}`))
    out.push({ table: table!, rows, bytes: Number(bytes) })
  }
  return out
}

interface State {
  readonly name: string
  readonly vacuum: ReadonlyArray<TableFigures>
  readonly vacuumFull: ReadonlyArray<TableFigures>
}

/** `--relations`: each state's relations (tables and indexes, without TOAST) of 5 bytes a message or more, after VACUUM and FULL. */
const showRelations = process.argv.includes("--relations")

/** Every relation of at least 5 bytes a message, partitions under their parent's names: bytes per message. */
const relations = async (): Promise<Map<string, number>> => {
  const sizes = await query(
    url,
    `SELECT coalesce(pi.relname, pt.relname, c.relname),
      sum(pg_relation_size(c.oid))::bigint
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class pi ON pi.oid = i.inhparent AND c.relkind = 'i'
    LEFT JOIN pg_class pt ON pt.oid = i.inhparent AND c.relkind = 'r'
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') GROUP BY 1 ORDER BY 2 DESC`
  )
  return new Map(
    sizes.map(([name, bytes]) => [name!, Math.round(Number(bytes) / total)] as const).filter(([, b]) => b >= 5)
  )
}

const measure = async (name: string): Promise<State> => {
  await query(url, "VACUUM ANALYZE")
  const vacuum = await tables()
  const before = showRelations ? await relations() : undefined
  await query(url, "VACUUM FULL")
  const vacuumFull = await tables()
  if (before !== undefined) {
    const after = await relations()
    process.stdout.write(`\n${name}: relations, bytes a message after VACUUM / FULL\n`)
    for (const [relation, bytes] of before)
      process.stdout.write(
        `  ${relation.padEnd(40)} ${String(bytes).padStart(6)} ${String(after.get(relation) ?? 0).padStart(6)}\n`
      )
  }
  return { name, vacuum, vacuumFull }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`
const perMessage = (bytes: number) => Math.round(bytes / total)

const print = (state: State) => {
  const sum = (figures: ReadonlyArray<TableFigures>) => figures.reduce((s, t) => s + t.bytes, 0)
  const full = new Map(state.vacuumFull.map((t) => [t.table, t]))
  process.stdout.write(`\n${state.name}: ${total} messages\n`)
  process.stdout.write(
    `  ${"table".padEnd(22)} ${"rows/msg".padStart(9)} ${"B/msg VACUUM".padStart(13)} ${"B/msg FULL".padStart(11)}\n`
  )
  for (const t of state.vacuum) {
    const f = full.get(t.table)
    if (t.bytes === 0 && (f?.bytes ?? 0) === 0) continue
    process.stdout.write(
      `  ${t.table.padEnd(22)} ${(t.rows / total).toFixed(2).padStart(9)} ${String(perMessage(t.bytes)).padStart(13)} ` +
        `${String(perMessage(f?.bytes ?? 0)).padStart(11)}\n`
    )
  }
  const [v, f] = [sum(state.vacuum), sum(state.vacuumFull)]
  process.stdout.write(
    `  ${"all".padEnd(22)} ${"".padStart(9)} ${String(perMessage(v)).padStart(13)} ${String(perMessage(f)).padStart(11)}` +
      `   (database: ${mb(v)} after VACUUM, ${mb(f)} after VACUUM FULL)\n`
  )
  return { vacuumBytesPerMessage: perMessage(v), vacuumFullBytesPerMessage: perMessage(f) }
}

const main = async () => {
  await createDatabase(adminUrl, database)
  const logDir = join(tmpdir(), `sms-storage-${stamp}`)
  mkdirSync(logDir, { recursive: true })
  let service: Service | undefined
  try {
    service = await startService({
      databaseUrl: url,
      logDir,
      env: { SMS_CLOCK: "test", SMS_RETENTION_DAYS: String(retentionDays), SMS_SCHEDULER_ENABLED: "true" }
    })
    const org = await createOrg(service, "Storage bench", total * 2)
    const headers = jsonHeaders(org)
    const started = Date.now()
    const [batchesPerWave, singlesPerWave] = [batches / waves, singles / waves]
    for (let w = 0; w < waves; w++) {
      const sendAt = new Date(
        Date.parse(
          (
            (await (
              await fetch(`${service.base}/admin/v1/clock`, {
                headers: { authorization: `Bearer ${service.adminToken}` }
              })
            ).json()) as { now: string }
          ).now
        ) + 30_000
      ).toISOString()
      await pool(batchesPerWave, 2, (i) => {
        const b = w * batchesPerWave + i
        return post(
          service!,
          batchesPath,
          headers,
          {
            recipients: Array.from({ length: 1000 }, (_, j) => `+26133${String(b * 1000 + j).padStart(7, "0")}`),
            text: "Storage bench batch message, about as long as a real one",
            send_at: sendAt
          },
          `storage-batch-${b}`
        )
      })
      await pool(singlesPerWave, 10, (i) => {
        const n = w * singlesPerWave + i
        return post(
          service!,
          messagesPath,
          headers,
          { to: `+26132${String(n).padStart(7, "0")}`, text: "Storage bench immediate message" },
          `storage-single-${n}`
        )
      })
      await advance(service, 60)
      // between waves, what autovacuum does on a server where it is on (it is off on the bench's)
      if (w < waves - 1) await query(url, "VACUUM")
    }
    const delivered = Number(await scalar(url, "SELECT count(*) FROM messages WHERE status = 'delivered'"))
    process.stdout.write(
      `${total} messages admitted and delivered in ${((Date.now() - started) / 1000).toFixed(0)} s (delivered: ${delivered})\n`
    )
    if (delivered !== total) throw new Error(`expected ${total} delivered messages, found ${delivered}`)

    const states: Array<State> = [
      await measure(
        waves === 1 ? "live (just delivered)" : `live (just delivered, in ${waves} waves with a VACUUM between)`
      )
    ]
    if (liveOnly) {
      states.forEach(print)
      return
    }
    await advance(service, dayS + 3600)
    states.push(await measure("compacted (a day later, within retention)"))
    await advance(service, retentionDays * dayS)
    const erased = Number(await scalar(url, "SELECT count(*) FROM messages WHERE erased_at IS NOT NULL"))
    if (erased !== total) throw new Error(`expected ${total} erased messages, found ${erased}`)
    states.push(await measure(`erased (past SMS_RETENTION_DAYS=${retentionDays})`))
    // the long run: the simulator has forgotten them (31 days), and their month's journal
    // partition, emptied by the erasure's fold, is dropped once the month is past
    await advance(service, 35 * dayS)
    const remembered = Number(await scalar(url, "SELECT count(*) FROM simulator_messages"))
    if (remembered !== 0) throw new Error(`expected the simulator to have forgotten every message, ${remembered} left`)
    states.push(await measure("erased, a month later (simulator rows gone, the month's journal partition dropped)"))

    const summary = states.map((s) => ({ state: s.name, ...print(s) }))
    const file = join(resultsDir, `storage-${stamp}.json`)
    writeFileSync(file, JSON.stringify({ total, batches, singles, waves, summary, states }, null, 2))
    process.stdout.write(`\nwritten: ${file}\n`)
  } finally {
    await service?.stop()
    if (process.env.BENCH_KEEP_DB !== "1") await dropDatabase(adminUrl, database)
  }
}

await main()
