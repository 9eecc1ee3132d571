/**
 * Concurrent admissions and the credit lots on PostgreSQL (src/ledger/LedgerStore.ts
 * `ledgerFragments`, src/domain/Credits.ts `splitGrant`): a large grant is stored as several lots
 * of one validity, and an admission skips a lot another admission holds, so admissions reserve
 * from different rows at once instead of queueing on one; however many arrive together, no credit
 * is reserved twice. The embedded PGlite serves one connection at a time, so only PostgreSQL can
 * tell: without DATABASE_URL the block is skipped and its name says why.
 *
 * "Does not wait" is observed without timing (test/support/WhileHeld.ts): the first admission runs
 * in a transaction kept open (its lot stays locked) while the second runs with `lock_timeout`.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { splitGrant } from "../../src/domain/Credits.ts"
import { admitScheduledQuickly } from "../support/QuickAdmit.ts"
import { App, withApp } from "../support/TestApp.ts"
import { whileHeld } from "../support/WhileHeld.ts"

const databaseUrl = process.env.DATABASE_URL

describe.skipIf(!databaseUrl)(
  "needs PostgreSQL (set DATABASE_URL; the embedded PGlite serves one connection at a time)",
  () => {
    withApp({ label: "lots" })((it) => {
      /** A scheduled one-segment message admitted by the one-statement admission. */
      const admitQuickly = (organisationId: string) => admitScheduledQuickly(organisationId, randomUUID(), 1)

      const lotsOfHolds = (organisationId: string) =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{
            lotId: string
            amount: number
          }>`SELECT lot_id::text AS lot_id, sum(amount)::integer AS amount
          FROM credit_holds WHERE organisation_id = ${organisationId} GROUP BY lot_id`
        })

      it.effect(
        "a second admission reserves from another lot of the grant while the first holds its lot",
        () =>
          Effect.gen(function* () {
            const app = yield* App
            const { orgId } = yield* app.newOrg({ credits: 100_000 })
            const { first, second } = yield* whileHeld("admission", admitQuickly(orgId), admitQuickly(orgId))
            expect(first._tag).toBe("Admitted")
            expect(typeof second === "string" ? second : second._tag, "the second admission").toBe("Admitted")
            const holds = yield* lotsOfHolds(orgId)
            expect(
              holds.map((h) => h.amount),
              "one credit from each of two lots"
            ).toEqual([1, 1])
          }),
        60_000
      )

      it.effect(
        "many admissions at once reserve exactly the credits there are, from several lots",
        () =>
          Effect.gen(function* () {
            const app = yield* App
            const credits = 200
            expect(splitGrant(credits).length, "the grant is several lots").toBeGreaterThan(1)
            const { orgId, apiKey } = yield* app.newOrg({ credits })
            const sendAt = new Date(Date.now() + 3_600_000).toISOString()
            const statuses = yield* Effect.all(
              Array.from({ length: credits + 40 }, (_, i) =>
                Effect.gen(function* () {
                  const res = yield* app.call("POST", "/api/sms/v2/messages/", {
                    token: apiKey,
                    headers: { "idempotency-key": `lots-${randomUUID()}` },
                    body: { to: `+26134${String(i).padStart(7, "0")}`, text: "at once", send_at: sendAt }
                  })
                  return res.status === 202 ? "admitted" : `${res.status} ${res.body?.error?.code}`
                })
              ),
              { concurrency: "unbounded" }
            )
            const count = (s: string) => statuses.filter((x) => x === s).length
            expect(count("admitted")).toBe(credits)
            expect(count("409 insufficient_credits")).toBe(40)
            const balance = yield* app.call("GET", "/api/sms/v2/balance/", { token: apiKey })
            expect({ reserved: balance.body.reserved, available: balance.body.available }).toEqual({
              reserved: credits,
              available: 0
            })
            const holds = yield* lotsOfHolds(orgId)
            expect(holds.reduce((sum, h) => sum + h.amount, 0)).toBe(credits)
            expect(holds.length, "the holds are spread over the grant's lots").toBe(splitGrant(credits).length)
          }),
        120_000
      )
    })
  }
)
