/**
 * The claims of the background work on PostgreSQL (src/messages/MessageQueueStore.ts, and the
 * sets retention erases: src/messages/Erasure.ts): two dispatchers
 * claiming at the same time never wait on each other's rows; the second takes what the first
 * has not locked (`FOR UPDATE SKIP LOCKED`). The embedded PGlite serves one connection at a time,
 * so only PostgreSQL can tell: without DATABASE_URL the block is skipped and its name says why.
 *
 * How "never waits" is observed without timing anything (test/support/WhileHeld.ts): the first
 * dispatcher claims inside a transaction it keeps open (its rows stay locked) until the second has
 * finished; the second claims with `lock_timeout` set, so if its claim ever waited for a locked
 * row it would fail with lock_not_available instead of returning (without SKIP LOCKED, it waits
 * for the first's rows).
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { Erasure } from "../../src/messages/Erasure.ts"
import { type ClaimedMessage, MessageQueueStore } from "../../src/messages/MessageQueueStore.ts"
import { MessageStore } from "../../src/messages/MessageStore.ts"
import type { MessageRow } from "../../src/messages/MessageRow.ts"
import { App, withApp } from "../support/TestApp.ts"
import { whileHeld } from "../support/WhileHeld.ts"

const databaseUrl = process.env.DATABASE_URL

describe.skipIf(!databaseUrl)(
  "needs PostgreSQL (set DATABASE_URL; the embedded PGlite serves one connection at a time)",
  () => {
    withApp({ label: "claims" })((it) => {
      /** `n` scheduled messages of a new organisation, due in an hour; their ids. */
      const scheduled = (n: number): Effect.Effect<ReadonlyArray<string>, never, App> =>
        Effect.gen(function* () {
          const app = yield* App
          const { apiKey } = yield* app.newOrg({ credits: n })
          const sendAt = new Date(Date.now() + 3_600_000).toISOString()
          const ids: Array<string> = []
          for (let i = 0; i < n; i++) {
            const res = yield* app.call("POST", "/api/sms/v2/messages/", {
              token: apiKey,
              headers: { "idempotency-key": `claims-${randomUUID()}` },
              body: { to: `+26134${String(i).padStart(7, "0")}`, text: "claimed", send_at: sendAt }
            })
            expect(res.status, res.text).toBe(202)
            ids.push(res.body.id)
          }
          return ids
        })

      /** `claim` as the first dispatcher, its rows held, while it runs again as the second (`whileHeld`). */
      const twoDispatchers = <E>(
        claim: (worker: string) => Effect.Effect<ReadonlyArray<MessageRow>, E, MessageQueueStore>
      ) =>
        whileHeld("claim", claim(randomUUID()), claim(randomUUID())).pipe(
          Effect.map(({ first, second }) => ({
            first: first.map((m) => m.id),
            second: typeof second === "string" ? second : second.map((m) => m.id)
          }))
        )

      for (const startNow of [false, true]) {
        it.effect(
          `two dispatchers claiming due messages at once never wait on each other's rows (${startNow ? "claims that start them" : "claims only"})`,
          () =>
            Effect.gen(function* () {
              const ids = yield* scheduled(6)
              const at = new Date(Date.now() + 7_200_000)
              const claims: Array<ReadonlyArray<ClaimedMessage>> = []
              const { first, second } = yield* twoDispatchers((worker) =>
                Effect.flatMap(MessageQueueStore, (q) => q.claimDue(at, 3, worker, { _tag: "All" }, startNow)).pipe(
                  Effect.tap((rows) => Effect.sync(() => claims.push(rows)))
                )
              )
              expect(first).toHaveLength(3)
              expect(second, "the second dispatcher's claim").toEqual(expect.any(Array))
              expect([...first, ...second].sort(), "each due message claimed once, by one of them").toEqual(
                [...ids].sort()
              )
              const expected = startNow
                ? { claim: "started", status: "processing" }
                : { claim: "claimed", status: "scheduled" }
              expect(claims.flat().map((m) => ({ claim: m.claim, status: m.status }))).toEqual(ids.map(() => expected))
            }),
          60_000
        )
      }

      it.effect(
        "two verifiers claiming due unknown messages at once never wait on each other's rows",
        () =>
          Effect.gen(function* () {
            const ids = yield* scheduled(6)
            // straight to `unknown` with a verification due (the state a lost provider answer leaves)
            yield* Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`UPDATE messages SET status = 'unknown', verify_at = now() WHERE id = ANY(${ids}::uuid[])`
            })
            const at = new Date(Date.now() + 7_200_000)
            const { first, second } = yield* twoDispatchers(() =>
              Effect.flatMap(MessageQueueStore, (q) => q.claimVerification(at, 3, 5_000))
            )
            expect(first).toHaveLength(3)
            expect(second, "the second verifier's claim").toEqual(expect.any(Array))
            expect([...first, ...second].sort(), "each due message claimed once, by one of them").toEqual(
              [...ids].sort()
            )
          }),
        60_000
      )

      it.effect(
        "two retention sets erasing at once never wait on each other's rows, and each message is erased once",
        () =>
          Effect.gen(function* () {
            const ids = yield* scheduled(6)
            // finished a week ago, in an organisation keeping its messages a day
            yield* Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`UPDATE messages SET status = 'delivered', updated_at = now() - interval '7 days' WHERE id = ANY(${ids}::uuid[])`
              yield* sql`UPDATE organisations SET retention_days = 1
            WHERE id = (SELECT organisation_id FROM messages WHERE id = ${ids[0]!}::uuid)`
            })
            const eraseSet = Effect.gen(function* () {
              const [store, erasure] = [yield* MessageStore, yield* Erasure]
              const at = new Date()
              // no default retention in this app: only this organisation's messages are past theirs
              return (yield* erasure.erase(yield* store.expired(undefined, at, 3), at)).map((m) => m.id)
            })
            const { first, second } = yield* whileHeld("set", eraseSet, eraseSet)
            expect(first).toHaveLength(3)
            expect(second, "the second set").toEqual(expect.any(Array))
            expect([...first, ...second].sort(), "each message erased once, by one of them").toEqual([...ids].sort())
          }),
        60_000
      )
    })
  }
)
