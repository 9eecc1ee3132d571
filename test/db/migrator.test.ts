/**
 * The migrations on effect/sql's Migrator, on the embedded database and, with DATABASE_URL, on
 * PostgreSQL (each case on a database of its own): a fresh database gets every migration once,
 * with one log line each; a database created by the previous migrator (its `schema_migrations`
 * rows) upgrades in place, applying nothing again, to the same schema as a fresh one; and
 * processes starting at once apply each migration exactly once (PostgreSQL only: the embedded
 * database serves one connection at a time). A database of version 13 holding messages in every
 * status, with their credit holds and entries and delivery receipts, upgrades to timelines in the
 * row and the partitioned ledger journal (migrations 14 to 16): each timeline reads the same (those
 * of messages in flight collapsed by the upgrade, those of finished ones by compaction, without
 * changing one entry, times to the microsecond), every entry is kept with its id in its month's
 * partition, settled holds and applied receipts are gone, pending ones stay.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { layerConfig } from "../../src/config/Config.ts"
import { DatabaseClient } from "../../src/db/Database.ts"
import { migrate } from "../../src/db/Migrator.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { unpackedEntries } from "../../src/messages/CompactTimeline.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import { decodeEnv } from "../support/ConfigEnv.ts"
import { scratchDatabaseUrl } from "../support/ScratchDatabase.ts"

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
const backend = onPostgres ? "PostgreSQL" : "embedded PGlite"
const allVersions = migrations.map((m) => m.version)
const legacyAppliedAt = new Date("2025-03-01T08:00:00.000Z")
const demoOrganisation = "0b0f6c1e-4c55-4d1c-9a35-2f6c1f3b9a10"

/** A database of its own (a scratch PostgreSQL database, or an embedded one in memory) and a way to open clients on it. */
const freshDatabase = (label: string) =>
  Effect.gen(function* () {
    const url = yield* scratchDatabaseUrl(`migr_${label}`)
    const decoded = decodeEnv(url === undefined ? { SMS_DATA_DIR: "memory://" } : { DATABASE_URL: url })
    if (!decoded.ok) return yield* Effect.die(decoded.errors.join("; "))
    /** A client with a pool of its own, as a process has, open until the test's scope closes. */
    return Layer.build(DatabaseClient.pipe(Layer.provide(layerConfig(decoded.config))))
  })

type Client = Effect.Success<Effect.Success<ReturnType<typeof freshDatabase>>>

/** What the previous migrator left: its table, the statements of versions 1 to `upTo` and their rows, a customer's row. */
const legacyMigrate = (upTo: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.gen(function* () {
      yield* sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`
      for (const m of migrations.filter((m) => m.version <= upTo)) {
        for (const statement of m.statements) yield* sql.unsafe(statement)
        yield* sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${legacyAppliedAt})`
      }
      yield* sql`INSERT INTO organisations (id, name, default_sender_name, created_at)
        VALUES (${demoOrganisation}, 'Kept', 'KEPT', now())`
    }).pipe(sql.withTransaction)
  })

/** Runs the service's migrations; the versions it logged as applied. */
const migrateLogged = Effect.gen(function* () {
  const applied: Array<unknown> = []
  const capture = Logger.layer([
    Logger.map(Logger.formatStructured, (entry) => {
      if (entry.message === "migration applied") applied.push(entry.annotations.version)
    })
  ])
  yield* migrate.pipe(Effect.provide(capture))
  return applied
})

const recorded = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ readonly migrationId: number; readonly createdAt: Date }>`
    SELECT migration_id, created_at FROM effect_sql_migrations ORDER BY migration_id`
})

/** The schema the migrations built: columns, indexes, constraints and functions, outside the migrators' own tables. */
const schemaOf = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const own = ["schema_migrations", "effect_sql_migrations"]
  return {
    columns:
      yield* sql`SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name NOT IN ${sql.in(own)} ORDER BY table_name, column_name`,
    indexes: yield* sql`SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = 'public' AND tablename NOT IN ${sql.in(own)} ORDER BY indexname`,
    constraints:
      yield* sql`SELECT conrelid::regclass::text AS on_table, conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
      WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT IN ${sql.in(own)} ORDER BY on_table, conname`,
    functions: yield* sql`SELECT proname, pg_get_functiondef(oid) AS definition FROM pg_proc
      WHERE pronamespace = 'public'::regnamespace ORDER BY proname, definition`
  }
})

/**
 * A message in each status with the timeline that brought it there (times with microseconds, as
 * any writer may store them), written with the schema of version 13.
 */
const timelinesByStatus: Record<string, ReadonlyArray<readonly [from: string | null, to: string, source: string]>> = {
  scheduled: [[null, "scheduled", "admission"]],
  processing: [[null, "processing", "admission"]],
  accepted: [
    [null, "processing", "admission"],
    ["processing", "accepted", "provider"]
  ],
  delivered: [
    [null, "scheduled", "admission"],
    ["scheduled", "processing", "dispatch"],
    ["processing", "accepted", "provider"],
    ["accepted", "delivered", "receipt"]
  ],
  undeliverable: [
    [null, "processing", "admission"],
    ["processing", "accepted", "provider"],
    ["accepted", "undeliverable", "receipt"]
  ],
  blocked: [
    [null, "scheduled", "admission"],
    ["scheduled", "blocked", "dispatch"]
  ],
  failed: [
    [null, "processing", "admission"],
    ["processing", "unknown", "recovery"],
    ["unknown", "failed", "verification"]
  ],
  unknown: [
    [null, "processing", "admission"],
    ["processing", "unknown", "provider"]
  ]
}
const finished = ["delivered", "undeliverable", "blocked", "failed"]

const seedMessages = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const [i, [status, timeline]] of Object.entries(timelinesByStatus).entries()) {
    const id = `00000000-0000-4000-8000-00000000000${i}`
    const at = (step: number) => `2026-01-0${i + 1}T10:00:0${step}.12345${step}Z`
    yield* sql`INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, created_at, updated_at)
      VALUES (${demoOrganisation}, ${id}, '+261340000001', 'KEPT', ${status}, 1, ${status}, ${at(0)}, ${at(timeline.length - 1)})`
    for (const [step, [from, to, source]] of timeline.entries()) {
      yield* sql`INSERT INTO message_events (organisation_id, message_id, from_status, to_status, source, at)
        VALUES (${demoOrganisation}, ${id}, ${from}, ${to}, ${source}, ${at(step)})`
    }
  }
})

/** Every message's timeline as MessageStore reads it, by its text (its status), times as the database prints them. */
const timelines = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const store = yield* MessageStore
  const ids = yield* sql<{ id: string; text: string }>`SELECT id::text, text FROM messages ORDER BY text`
  const read: Record<string, unknown> = {}
  for (const { id, text } of ids) read[text] = yield* store.timeline(demoOrganisation, id)
  return read
}).pipe(Effect.provide(MessageStore.layer))

/** Version 13's ledger and receipts for the messages of `seedMessages`: a lot, its grant, a hold and entries per message, two receipts. */
const seedLedger = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [lot] = yield* sql<{
    id: string
  }>`INSERT INTO credit_lots (organisation_id, amount, reserved, consumed, created_at)
    VALUES (${demoOrganisation}, 100, 4, 2, '2026-01-01T00:00:00Z') RETURNING id::text`
  const entry = (kind: string, messageIndex: number | null, at: string) =>
    sql`INSERT INTO credit_entries (organisation_id, lot_id, message_id, kind, amount, at)
      VALUES (${demoOrganisation}, ${lot!.id}, ${messageIndex === null ? null : `00000000-0000-4000-8000-00000000000${messageIndex}`}, ${kind}, ${kind === "grant" ? 100 : 1}, ${at})`
  const hold = (messageIndex: number, state: string) =>
    sql`INSERT INTO credit_holds (organisation_id, message_id, lot_id, amount, state, created_at, settled_at)
      VALUES (${demoOrganisation}, ${`00000000-0000-4000-8000-00000000000${messageIndex}`}, ${lot!.id}, 1, ${state}, '2026-01-02T00:00:00Z',
        ${state === "pending" ? null : "2026-02-03T00:00:00Z"})`
  yield* entry("grant", null, "2026-01-01T00:00:00.5Z")
  // scheduled, processing, accepted, unknown: reserved; delivered, undeliverable: consumed; blocked, failed: released
  for (const [i, settled] of [
    [0, null],
    [1, null],
    [2, null],
    [7, null],
    [3, "consume"],
    [4, "consume"],
    [5, "release"],
    [6, "release"]
  ] as const) {
    yield* entry("reserve", i, `2026-01-02T00:00:0${i}Z`)
    if (settled !== null) yield* entry(settled, i, `2026-02-03T00:00:0${i}Z`)
    yield* hold(i, settled === null ? "pending" : settled === "consume" ? "posted" : "voided")
  }
  yield* sql`INSERT INTO provider_receipts (provider_ref, outcome, occurred_at, received_at, next_attempt_at, state, settled_at)
    VALUES ('sim:applied', 'delivered', now(), now(), now(), 'applied', now()), ('sim:waiting', 'delivered', now(), now(), now(), 'pending', NULL)`
})

/** The ledger and receipts as they read: entries (with ids), holds, receipts, and the journal's partitions. */
const ledgerRead = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return {
    entries: yield* sql<{
      id: string
      messageId: string | null
      kind: string
      at: string
    }>`SELECT id::text, message_id::text, kind,
      to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at FROM credit_entries ORDER BY id`,
    holds: yield* sql<{
      messageId: string
      state: string
    }>`SELECT message_id::text, state FROM credit_holds ORDER BY message_id`,
    receipts: yield* sql<{ providerRef: string }>`SELECT provider_ref FROM provider_receipts ORDER BY provider_ref`
  }
})

const utc = (at: string) => `to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`

/** Each entry's time to the microsecond, in timeline order per message: from the rows, and from the collapsed timelines unless `rowsOnly`. */
const entryTimes = (rowsOnly: boolean) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const collapsed = rowsOnly
      ? ""
      : `UNION ALL
      SELECT m.text, c.n, ${utc("c.at")} FROM messages AS m CROSS JOIN LATERAL (${unpackedEntries("m.timeline")}) AS c`
    const rows = yield* sql<{ at: string }>`SELECT at FROM (
        SELECT m.text, e.id AS n, ${sql.literal(utc("e.at"))} AS at FROM message_events AS e
        JOIN messages AS m ON m.organisation_id = e.organisation_id AND m.id = e.message_id
        ${sql.literal(collapsed)}) AS t
      ORDER BY text, n`
    return rows.map((r) => r.at)
  })

const on =
  (client: Client) =>
  <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
    Effect.provideContext(effect, client)

describe(`migrations on effect/sql's Migrator (${backend})`, { timeout: 120_000 }, () => {
  it.live("a fresh database gets every migration once, a log line each; a second start applies nothing", () =>
    Effect.gen(function* () {
      const db = on(yield* yield* freshDatabase("fresh"))
      expect(yield* db(migrateLogged)).toEqual(allVersions)
      expect((yield* db(recorded)).map((r) => r.migrationId)).toEqual(allVersions)
      expect(yield* db(migrateLogged)).toEqual([])
      const schema = yield* db(schemaOf)
      // the last migrations' work is there
      expect(schema.columns).toContainEqual(
        expect.objectContaining({ tableName: "provider_receipts", columnName: "recipient" })
      )
      expect(schema.indexes).toContainEqual(expect.objectContaining({ indexname: "messages_in_flight_to" }))
      expect(schema.columns).toContainEqual(
        expect.objectContaining({ tableName: "messages", columnName: "timeline", dataType: "bytea" })
      )
      expect(schema.indexes).toContainEqual(expect.objectContaining({ indexname: "messages_timeline_due" }))
      expect(schema.functions.map((f) => f.proname)).toEqual(
        expect.arrayContaining(["sms_abort", "sms_month_partition"])
      )
      expect(schema.indexes).toContainEqual(expect.objectContaining({ indexname: "credit_entries_message" }))
      // the journal is partitioned: this month's partition and the next two, and the default
      const partitions = yield* db(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<{
              name: string
            }>`SELECT c.relname::text AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
          WHERE i.inhparent = 'credit_entries'::regclass ORDER BY 1`
        )
      )
      const month = (ahead: number) => {
        const d = new Date()
        const m = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + ahead, 1))
        return `credit_entries_p${m.getUTCFullYear()}${String(m.getUTCMonth() + 1).padStart(2, "0")}`
      }
      expect(partitions.map((p) => p.name)).toEqual(["credit_entries_default", month(0), month(1), month(2)])
    })
  )

  it.live(
    "a database of the previous migrator upgrades in place: its versions count as applied, nothing runs again, the schema is a fresh one's",
    () =>
      Effect.gen(function* () {
        const fresh = on(yield* yield* freshDatabase("reference"))
        expect(yield* fresh(migrateLogged)).toEqual(allVersions)
        const legacy = on(yield* yield* freshDatabase("legacy"))
        yield* legacy(legacyMigrate(Math.max(...allVersions)))

        expect(yield* legacy(migrateLogged)).toEqual([])
        expect(yield* legacy(recorded)).toEqual(
          allVersions.map((migrationId) => ({ migrationId, createdAt: legacyAppliedAt }))
        )
        expect(yield* legacy(schemaOf)).toEqual(yield* fresh(schemaOf))
        // the data stays, and the previous migrator's table with it (for a previous release started on the database)
        const kept = yield* legacy(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.all([
              sql`SELECT name FROM organisations WHERE id = ${demoOrganisation}`,
              sql<{ readonly version: number }>`SELECT version FROM schema_migrations ORDER BY version`
            ])
          )
        )
        expect(kept[0]).toEqual([{ name: "Kept" }])
        expect(kept[1].map((r) => r.version)).toEqual(allVersions)
        expect(yield* legacy(migrateLogged)).toEqual([])
      })
  )

  it.live("a database the previous migrator left halfway gets only the versions it lacks", () =>
    Effect.gen(function* () {
      const fresh = on(yield* yield* freshDatabase("reference2"))
      expect(yield* fresh(migrateLogged)).toEqual(allVersions)
      const legacy = on(yield* yield* freshDatabase("halfway"))
      yield* legacy(legacyMigrate(5))

      expect(yield* legacy(migrateLogged)).toEqual(allVersions.filter((v) => v > 5))
      expect((yield* legacy(recorded)).map((r) => r.migrationId)).toEqual(allVersions)
      expect(yield* legacy(schemaOf)).toEqual(yield* fresh(schemaOf))
    })
  )

  it.live(
    "a database holding messages in every status upgrades: timelines read the same, before and after compaction; every entry kept, settled holds and applied receipts gone",
    () =>
      Effect.gen(function* () {
        const db = on(yield* yield* freshDatabase("timelines"))
        yield* db(legacyMigrate(13))
        yield* db(seedMessages)
        yield* db(seedLedger)
        const times = yield* db(entryTimes(true))
        expect(times).toHaveLength(Object.values(timelinesByStatus).flat().length)
        expect(times).toContain("2026-01-04 10:00:03.123453")
        const before = yield* db(ledgerRead)
        expect(before.entries).toHaveLength(13)

        expect(yield* db(migrateLogged)).toEqual(allVersions.filter((v) => v > 13))
        const upgraded = yield* db(timelines)
        for (const [status, timeline] of Object.entries(timelinesByStatus)) {
          expect(
            (upgraded[status] as Array<{ fromStatus: string | null; toStatus: string; source: string }>).map((e) => [
              e.fromStatus,
              e.toStatus,
              e.source
            ])
          ).toEqual(timeline)
        }
        // the messages in flight were collapsed by the upgrade (they will move again: entries go in the row); the finished ones keep their rows for now
        const stored = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                text: string
                rows: number
                collapsed: number | null
              }>`SELECT m.text, length(m.timeline) AS collapsed,
          (SELECT count(*) FROM message_events AS e WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id)::integer AS rows
          FROM messages AS m ORDER BY m.text`
          )
        )
        expect(stored).toEqual(
          Object.entries(timelinesByStatus)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([text, timeline]) =>
              finished.includes(text)
                ? { text, rows: timeline.length, collapsed: null }
                : { text, rows: 0, collapsed: 9 * timeline.length }
            )
        )
        expect(yield* db(entryTimes(false))).toEqual(times)

        // the journal: every entry with its id and time, in the partition of its month; holds pending only, receipts pending only
        const after = yield* db(ledgerRead)
        expect(after.entries).toEqual(before.entries)
        expect(after.holds).toEqual(before.holds.filter((h) => h.state === "pending"))
        expect(after.holds.map((h) => h.messageId.slice(-1))).toEqual(["0", "1", "2", "7"])
        expect(after.receipts).toEqual([{ providerRef: "sim:waiting" }])
        const placed = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                partition: string
                n: number
              }>`SELECT tableoid::regclass::text AS partition, count(*)::integer AS n FROM credit_entries
          GROUP BY 1 ORDER BY 1`
          )
        )
        expect(placed).toEqual([
          { partition: "credit_entries_p202601", n: 9 },
          { partition: "credit_entries_p202602", n: 4 }
        ])
        // a new entry's id follows the last one's
        const [next] = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{ id: string }>`INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
          SELECT organisation_id, lot_id, 'grant', 1, now() FROM credit_entries LIMIT 1 RETURNING id::text`
          )
        )
        expect(Number(next!.id)).toBe(Math.max(...before.entries.map((e) => Number(e.id))) + 1)

        const collapse = (limit: number) =>
          db(
            Effect.gen(function* () {
              return (yield* (yield* MessageStore).collapseTimelines(new Date("2027-01-01T00:00:00Z"), limit)).length
            }).pipe(Effect.provide(MessageStore.layer))
          )
        expect(yield* collapse(3)).toBe(3)
        expect(yield* collapse(1_000)).toBe(1)
        expect(yield* collapse(1_000)).toBe(0)
        const left = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                text: string
                rows: number
                collapsed: number | null
              }>`SELECT m.text, length(m.timeline) AS collapsed,
          (SELECT count(*) FROM message_events AS e WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id)::integer AS rows
          FROM messages AS m ORDER BY m.text`
          )
        )
        expect(left).toEqual(
          Object.entries(timelinesByStatus)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([text, timeline]) => ({ text, rows: 0, collapsed: 9 * timeline.length }))
        )
        expect(yield* db(timelines)).toEqual(upgraded)
        expect(yield* db(entryTimes(false))).toEqual(times)
      })
  )

  it.live(
    "a database holding messages in every status upgrades to messages partitioned by month: every row kept as it was, each in its month's partition",
    () =>
      Effect.gen(function* () {
        const db = on(yield* yield* freshDatabase("partitioned"))
        yield* db(legacyMigrate(17))
        // random ids (made before ids were time-ordered) and time-ordered ones of two months, a message in each status of each kind
        const v7 = (iso: string, n: number) => {
          const hex = Date.parse(iso).toString(16).padStart(12, "0")
          return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, "0")}`
        }
        const statuses = Object.keys(timelinesByStatus)
        const ids = statuses.flatMap((status, i) => [
          { id: `00000000-0000-4000-8000-0000000001${String(i).padStart(2, "0")}`, status, month: "default" },
          { id: v7("2026-11-15T10:00:00Z", i), status, month: "p202611" },
          { id: v7("2026-12-01T00:00:00.001Z", i), status, month: "p202612" }
        ])
        const rowsOf = Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<{
              id: string
              row: string
            }>`SELECT id::text, row_to_json(m)::text AS row FROM messages AS m ORDER BY id`
        )
        yield* db(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.forEach(
              ids,
              ({ id, status }, i) =>
                sql`INSERT INTO messages (organisation_id, id, batch_id, batch_position, to_number, sender_name, text, segments, status,
              send_at, due_at, provider_message_id, created_at, updated_at, timeline)
            VALUES (${demoOrganisation}, ${id}, ${i % 2 === 0 ? "0b0f6c1e-4c55-4d1c-9a35-2f6c1f3b9a11" : null}, ${i % 2 === 0 ? i : null},
              '+261340000001', 'KEPT', ${status}, 1, ${status}, '2026-11-20T10:00:00.123456Z', '2026-11-20T10:00:00.123456Z',
              ${status === "accepted" ? `ref-${i}` : null}, '2026-11-15T10:00:00.654321Z', '2026-11-21T10:00:00Z', '\\x00'::bytea)`,
              { discard: true }
            )
          )
        )
        const before = yield* db(rowsOf)
        expect(before).toHaveLength(ids.length)

        expect(yield* db(migrateLogged)).toEqual(allVersions.filter((v) => v > 17))
        expect(yield* db(rowsOf)).toEqual(before)
        const placed = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                id: string
                partition: string
              }>`SELECT id::text, tableoid::regclass::text AS partition FROM messages ORDER BY id`
          )
        )
        expect(placed).toEqual(
          ids.map(({ id, month }) => ({ id, partition: `messages_${month}` })).sort((a, b) => a.id.localeCompare(b.id))
        )
        // each message reads as before through the store, and a new message of either kind goes where its id says
        const found = yield* db(
          Effect.gen(function* () {
            const store = yield* MessageStore
            return yield* Effect.forEach(ids, ({ id }) => store.find(demoOrganisation, id))
          }).pipe(Effect.provide(MessageStore.layer))
        )
        expect(found.map((m) => m?.status)).toEqual(ids.map((m) => m.status))
        const [newest] = yield* db(
          Effect.flatMap(
            SqlClient.SqlClient,
            (sql) =>
              sql<{
                partition: string
              }>`INSERT INTO messages (organisation_id, id, to_number, sender_name, text, segments, status, created_at, updated_at)
          VALUES (${demoOrganisation}, ${v7("2026-11-30T23:59:59.999Z", 99)}, '+261340000001', 'KEPT', 'new', 1, 'scheduled', now(), now())
          RETURNING tableoid::regclass::text AS partition`
          )
        )
        expect(newest!.partition).toBe("messages_p202611")
      })
  )

  it.live.skipIf(!onPostgres)(
    "processes starting at once apply each migration exactly once, on a fresh database and on the previous migrator's",
    () =>
      Effect.gen(function* () {
        for (const [label, before] of [
          ["race", 0],
          ["race_legacy", Math.max(...allVersions)]
        ] as const) {
          const database = yield* freshDatabase(label)
          const first = on(yield* database)
          if (before > 0) yield* first(legacyMigrate(before))
          const others = yield* Effect.all([database, database, database])
          const logged = yield* Effect.all(
            [first, ...others.map(on)].map((db) => db(migrateLogged)),
            { concurrency: "unbounded" }
          )
          expect(logged.flat().sort((a, b) => Number(a) - Number(b))).toEqual(before > 0 ? [] : allVersions)
          expect((yield* first(recorded)).map((r) => r.migrationId)).toEqual(allVersions)
        }
      })
  )
})
