/**
 * Fair share while a campaign drains (docs/decisions.md#fair-share-and-fleet-limits, issue 39): a
 * claim's cost must not grow with another organisation's backlog, or a message of an organisation
 * with nothing else waiting waits for the next claim, however fair the claim's shares are. A's
 * campaign is 10 batches of 1000 members due at once, admitted through the API after the planner's
 * statistics were taken (or before any were), as a campaign lands on a live database; B has one
 * message due. A claim of 64 takes B's message and reads about as many of messages' rows as it
 * claims, not A's 10,000: rows read as the connection counts them (pg_stat_get_xact_tuples_*,
 * before and after the claim), each claim run in a transaction rolled back, so that every claim sees
 * the same backlog. Before issue 39 such a claim read 1.3 million rows, A's backlog for each message
 * it claimed (a claim of 512 ran 5 s, and B's messages were handed over in clumps); since, about
 * 330 (390 for a claim only).
 *
 * What this guards against is the planner of the PostgreSQL the service runs on in production, its
 * statistics and its partitions made ahead: without DATABASE_URL the block is skipped and its
 * name says why.
 */
import { describe, expect } from "@effect/vitest"
import { Data, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { expectAdmitted, oneSegmentText, ordinaryNumbers, postBatch } from "../batches/support.ts"
import { App, withApp } from "../support/TestApp.ts"

const databaseUrl = process.env.DATABASE_URL

/** Members of A's campaign (batches of 1000), and the most rows of messages one claim of `claimSize` may read. */
const campaign = 10_000
const claimSize = 64
const readsMax = 2_000

class RolledBack<A> extends Data.TaggedError("RolledBack")<{ readonly value: A }> {}

describe.skipIf(!databaseUrl)("needs PostgreSQL (set DATABASE_URL): its planner's plans with a campaign due", () => {
  for (const statistics of ["taken before the campaign", "never taken"] as const) {
    withApp({ label: statistics === "never taken" ? "campaignfresh" : "campaignstale" })((it) => {
      it.effect(
        `a claim takes B's due message and reads about what it claims while A's campaign of ${campaign} batch members is due (statistics ${statistics})`,
        () =>
          Effect.gen(function* () {
            const app = yield* App
            const sql = yield* SqlClient.SqlClient
            const a = yield* app.newOrg({ credits: campaign })
            const b = yield* app.newOrg({ credits: 1 })
            if (statistics === "taken before the campaign") yield* sql`ANALYZE messages`
            const start = Date.now()
            const at = (minutes: number) => new Date(start + minutes * 60_000)
            for (let i = 0; i < campaign / 1000; i++) {
              expectAdmitted(
                yield* postBatch(a.apiKey, {
                  recipients: ordinaryNumbers(1000, i * 1000),
                  text: oneSegmentText,
                  send_at: at(60).toISOString()
                })
              )
            }
            expectAdmitted(
              yield* postBatch(b.apiKey, {
                recipients: ordinaryNumbers(1, 50_000),
                text: oneSegmentText,
                send_at: at(61).toISOString()
              })
            )

            // rows read from messages' partitions, by their heaps (sequential and bitmap scans) and
            // their indexes (index scans): the counts this connection has not yet reported, earlier
            // statements' included, so read before and after the claim, in its transaction, which
            // has the connection to itself
            const rowsRead = Effect.map(
              sql<{ read: number }>`SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(r.oid)
                  + pg_stat_get_xact_tuples_fetched(r.oid)), 0)::integer AS read
                FROM pg_inherits AS i
                CROSS JOIN LATERAL (SELECT i.inhrelid AS oid UNION ALL SELECT x.indexrelid FROM pg_index AS x WHERE x.indrelid = i.inhrelid) AS r
                WHERE i.inhparent = 'messages'::regclass`,
              ([row]) => row?.read ?? 0
            )

            /** A claim in a transaction rolled back: what it took and how many rows of messages' partitions it read. */
            const claimOnce = (startNow: boolean) =>
              sql
                .withTransaction(
                  Effect.gen(function* () {
                    const queue = yield* MessageQueueStore
                    const before = yield* rowsRead
                    const claimed = yield* queue.claimDue(at(62), claimSize, randomUUID(), { _tag: "All" }, startNow)
                    const read = (yield* rowsRead) - before
                    return yield* new RolledBack({ value: { claimed, read } })
                  })
                )
                .pipe(
                  Effect.catchTag("RolledBack", (rolledBack) => Effect.succeed(rolledBack.value)),
                  Effect.orDie
                )

            for (const startNow of [true, false]) {
              const { claimed, read } = yield* claimOnce(startNow)
              const what = startNow ? "a claim that starts what it takes" : "a claim only"
              expect(claimed, what).toHaveLength(claimSize)
              expect(
                claimed.filter((m) => m.organisationId === b.orgId),
                `${what}: B's message in the first claim`
              ).toHaveLength(1)
              expect(read, `${what}: rows of messages read, against A's ${campaign} due`).toBeLessThan(readsMax)
            }
          }),
        180_000
      )
    })
  }
})
