/**
 * The whole service with SMS_PROVIDER=smpp against SMSC simulators started in-process on free
 * ports: the one harness (withApp) on the system clock with its background loops running, short
 * SMPP timings, and what a test reads about one message (status, timeline, credits, receipts) and
 * about what the SMSC received for it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Smsc } from "../../../simulator/smsc/Smsc.ts"
import type { AppConfigShape } from "../../../src/config/Config.ts"
import type { RouteSettings, SmppSettings } from "../../../src/config/SmppSettings.ts"
import { eventuallyEffect } from "../../support/Eventually.ts"
import type { TestAppOptions } from "../../support/TestApp.ts"
import { testSettings } from "./support.ts"
import { timelineEntriesSql } from "../../support/Timelines.ts"

/** The configuration of an app sending through `routes`: the real loops, quick verification. */
export const smppConfig = (
  routes: ReadonlyArray<RouteSettings>,
  smpp: Partial<SmppSettings> = {},
  config: Partial<AppConfigShape> = {}
): Partial<AppConfigShape> => ({
  provider: "smpp",
  smpp: testSettings(routes, smpp),
  schedulerEnabled: true,
  verifyIntervalMs: 200,
  ...config
})

/**
 * withApp's options for the service over `routes` (read when the app is built, once the suite's
 * SMSCs are started), on a database of its own (`label`) since its loops run.
 */
export const smppApp = (
  label: string,
  routes: () => ReadonlyArray<RouteSettings>,
  smpp: Partial<SmppSettings> = {},
  config: Partial<AppConfigShape> = {}
): Effect.Effect<TestAppOptions> => Effect.sync(() => ({ label, config: smppConfig(routes(), smpp, config) }))

/** The statuses a message leaves only through verification, or never. */
const finalStatuses = new Set(["delivered", "undeliverable", "failed", "blocked"])

/** Whether `status` is final (docs/decisions.md#message-states). */
export const isFinal = (status: string): boolean => finalStatuses.has(status)

/** Credits moved for one message by the ledger: reserved at admission, then consumed or released. */
export interface MessageCredits {
  readonly reserved: number
  readonly consumed: number
  readonly released: number
}

/** What the store says about one message. */
export interface MessageFacts {
  readonly id: string
  readonly to: string
  readonly status: string
  /** `from>to@source`, oldest first. */
  readonly transitions: ReadonlyArray<string>
  /** Still held: reserved minus consumed minus released. */
  readonly credits: MessageCredits
  /** Receipts stored for its provider id, by state. */
  readonly receipts: ReadonlyArray<string>
  /** The provider's late answer kept as verification evidence (`accepted` or `rejected`), if any. */
  readonly evidence: string | null
}

/** The facts of every message of an organisation, by id. */
export const factsOf = (orgId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      id: string
      toNumber: string
      status: string
      transitions: Array<string> | null
      reserve: number
      consume: number
      release: number
      receipts: Array<string> | null
      evidence: string | null
    }>`
      SELECT m.id::text AS id, m.to_number, m.status,
        (SELECT array_agg(coalesce(e.from_status, '') || '>' || e.to_status || '@' || e.source ORDER BY e.part, e.position)
          FROM (${sql.literal(timelineEntriesSql)}) AS e WHERE e.organisation_id = m.organisation_id AND e.message_id = m.id) AS transitions,
        (SELECT coalesce(sum(c.amount) FILTER (WHERE c.kind = 'reserve'), 0)::integer FROM credit_entries c
          WHERE c.organisation_id = m.organisation_id AND c.message_id = m.id) AS reserve,
        (SELECT coalesce(sum(c.amount) FILTER (WHERE c.kind = 'consume'), 0)::integer FROM credit_entries c
          WHERE c.organisation_id = m.organisation_id AND c.message_id = m.id) AS consume,
        (SELECT coalesce(sum(c.amount) FILTER (WHERE c.kind = 'release'), 0)::integer FROM credit_entries c
          WHERE c.organisation_id = m.organisation_id AND c.message_id = m.id) AS release,
        (SELECT array_agg(r.state ORDER BY r.id) FROM provider_receipts r WHERE r.provider_ref = m.provider_message_id) AS receipts,
        (SELECT v.result FROM provider_evidence v WHERE v.organisation_id = m.organisation_id AND v.message_id = m.id) AS evidence
      FROM messages m WHERE m.organisation_id = ${orgId}`
    return new Map(
      rows.map((r) => [
        r.id,
        {
          id: r.id,
          to: r.toNumber,
          status: r.status,
          transitions: (r.transitions ?? []).map((t) => (t.startsWith(">") ? `-${t}` : t)),
          credits: { reserved: r.reserve - r.consume - r.release, consumed: r.consume, released: r.release },
          receipts: r.receipts ?? [],
          evidence: r.evidence
        } satisfies MessageFacts
      ])
    )
  })

/**
 * Polls the organisation's messages until `done` holds for every one of them; returns them by id.
 * Polled as a list, so that a timeout names each message's facts (a Map prints as `{}`).
 */
export const settled = (
  orgId: string,
  done: (m: MessageFacts) => boolean,
  options: { readonly timeoutMs?: number; readonly what?: string } = {}
) =>
  eventuallyEffect(
    Effect.map(factsOf(orgId), (facts) => [...facts.values()]),
    (all) => all.length > 0 && all.every(done),
    { timeoutMs: options.timeoutMs ?? 20_000, intervalMs: 100, what: options.what ?? "every message settled" }
  ).pipe(Effect.map((all) => new Map(all.map((m) => [m.id, m]))))

/** How many `submit_sm` the SMSC received for this recipient with this text (one message's, when texts are unique). */
export const submitsAt = (smsc: Smsc, to: string, text: string): number =>
  smsc.received.reduce((n, r) => (r.to === to && r.text === text ? n + 1 : n), 0)

/** Credits held, consumed and released: the ledger effect a contract row names. */
export const credits = {
  consumed: { reserved: 0, consumed: 1, released: 0 },
  released: { reserved: 0, consumed: 0, released: 1 },
  reserved: { reserved: 1, consumed: 0, released: 0 }
} as const
