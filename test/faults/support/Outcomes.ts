/**
 * What the database says after a fault, read straight from the tables: every message with its
 * status, how many times the simulator was handed it (`simulator_messages.submissions`) and where
 * its credits are (test/support/Credits.ts); every credit lot with its counters, its pending holds
 * and what its ledger entries (and folded totals) add up to. And the
 * checks the fault tests make on them, each returning the list of what is wrong (empty when
 * all holds), so that a failure names the messages and lots concerned.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as Str from "effect/String"
import { SqlClient } from "effect/sql"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import { lotCreditsSql, messageCreditsSql } from "../../support/Credits.ts"
import { eventually } from "../../support/Eventually.ts"
import { finalStatuses, type MessageStatus } from "../../../src/domain/MessageStatus.ts"

export interface MessageFact {
  readonly organisationId: string
  readonly id: string
  readonly batchId: string | null
  readonly toNumber: string
  readonly status: MessageStatus
  readonly segments: number
  /** Times the simulator was handed it (0: never reached it). */
  readonly submissions: number
  /** Its credits: pending (held), posted (consumed), voided (released). */
  readonly pending: number
  readonly posted: number
  readonly voided: number
}

export interface LotFact {
  readonly organisationId: string
  readonly id: string
  readonly amount: number
  readonly reserved: number
  readonly consumed: number
  readonly expired: boolean
  /** Credits of its pending holds. */
  readonly pending: number
  /** Sums of its ledger entries (and folded totals) per kind. */
  readonly granted: number
  readonly reservedEntries: number
  readonly consumedEntries: number
  readonly releasedEntries: number
}

export interface Facts {
  readonly messages: ReadonlyArray<MessageFact>
  readonly lots: ReadonlyArray<LotFact>
}

/** Runs `effect` against the database of `url` over one connection of its own. */
export const withDatabase = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(
        PgClient.layer({ url: Redacted.make(url), maxConnections: 1, transformResultNames: Str.snakeToCamel })
      )
    )
  )

/** Reads every message and every lot of the database. */
export const readFacts = (url: string): Promise<Facts> =>
  withDatabase(
    url,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const messages =
        yield* sql<MessageFact>`SELECT m.organisation_id::text, m.id::text, m.batch_id::text, m.to_number, m.status,
        m.segments::integer, coalesce(s.submissions, 0)::integer AS submissions,
        coalesce(c.pending, 0) AS pending, coalesce(c.posted, 0) AS posted, coalesce(c.voided, 0) AS voided
      FROM messages AS m
      LEFT JOIN simulator_messages AS s ON s.organisation_id = m.organisation_id AND s.message_id = m.id
      LEFT JOIN (${sql.literal(messageCreditsSql)}) AS c ON c.organisation_id = m.organisation_id AND c.message_id = m.id`
      const lots = yield* sql<LotFact>`SELECT l.organisation_id::text, l.id::text, l.amount, l.reserved, l.consumed,
        coalesce(l.valid_until < (now() AT TIME ZONE 'UTC')::date, false) AS expired,
        coalesce(c.pending, 0) AS pending, coalesce(c.granted, 0) AS granted, coalesce(c.reserved, 0) AS reserved_entries,
        coalesce(c.consumed, 0) AS consumed_entries, coalesce(c.released, 0) AS released_entries
      FROM credit_lots AS l
      LEFT JOIN (${sql.literal(lotCreditsSql)}) AS c ON c.organisation_id = l.organisation_id AND c.lot_id = l.id
      ORDER BY l.organisation_id, l.id`
      return { messages, lots }
    })
  )

const finals: ReadonlySet<string> = new Set(finalStatuses)

/** Whether a message is where it stays: final, or `accepted` on the number that never sends a receipt, or `unknown` on the one never verified. */
export const isAtRest = (m: MessageFact): boolean =>
  finals.has(m.status) ||
  (m.status === "accepted" && m.toNumber === testNumbers.acceptedNoReceipt) ||
  (m.status === "unknown" && m.toNumber === testNumbers.unknownForGood)

/** How many messages are in each status. */
export const statusCounts = (messages: ReadonlyArray<{ readonly status: string }>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const m of messages) counts[m.status] = (counts[m.status] ?? 0) + 1
  return counts
}

/** Reads the facts until every message is at rest; fails after `timeoutMs`. */
export const atRest = (url: string, timeoutMs = 120_000): Promise<Facts> =>
  eventually(
    () => readFacts(url),
    (f) => f.messages.every(isAtRest),
    { timeoutMs, intervalMs: 500, what: "every message at rest" }
  )

/**
 * The status a message must end in (docs/decisions.md#the-provider-simulator), given whether the simulator received
 * it: a message that never reached the provider ends `failed`, whatever its number.
 */
export const expectedStatus = (to: string, received: boolean): MessageStatus => {
  if (!received) return "failed"
  switch (to) {
    case testNumbers.undeliverable:
      return "undeliverable"
    case testNumbers.rejected:
    case testNumbers.unreachable:
    case testNumbers.unknownNeverReceived:
      return "failed"
    case testNumbers.acceptedNoReceipt:
      return "accepted"
    case testNumbers.unknownForGood:
      return "unknown"
    default:
      return "delivered"
  }
}

/** Messages handed to the provider more than once, or not in the status their number and its reception give. */
export const outcomeProblems = (messages: ReadonlyArray<MessageFact>): Array<string> =>
  messages.flatMap((m) => {
    const problems: Array<string> = []
    if (m.submissions > 1) problems.push(`${m.id} (${m.toNumber}) was submitted ${m.submissions} times`)
    const expected = expectedStatus(m.toNumber, m.submissions > 0)
    if (m.status !== expected)
      problems.push(`${m.id} (${m.toNumber}) is ${m.status}, not ${expected} (submissions: ${m.submissions})`)
    return problems
  })

/** Where a message's credits must be: pending until settled, posted once accepted, voided once failed or blocked. */
const holdStateOf = (status: MessageStatus): "pending" | "posted" | "voided" =>
  status === "scheduled" || status === "processing" || status === "unknown"
    ? "pending"
    : status === "failed" || status === "blocked"
      ? "voided"
      : "posted"

/**
 * The ledger against the messages, exactly: each message holds its segments, all in the state
 * its status gives; each lot's counters equal its holds and its entries; for each organisation,
 * granted = consumed + reserved + available + expired-unreserved (docs/decisions.md#credits).
 */
export const ledgerProblems = ({ messages, lots }: Facts): Array<string> => {
  const problems: Array<string> = []
  for (const m of messages) {
    const held = { pending: m.pending, posted: m.posted, voided: m.voided }
    const expected = { pending: 0, posted: 0, voided: 0, [holdStateOf(m.status)]: m.segments }
    if (held.pending !== expected.pending || held.posted !== expected.posted || held.voided !== expected.voided) {
      problems.push(`message ${m.id} (${m.status}, ${m.segments} segments) holds ${JSON.stringify(held)}`)
    }
  }
  for (const l of lots) {
    const lot = `lot ${l.organisationId}/${l.id}`
    if (l.reserved !== l.pending) problems.push(`${lot}: reserved ${l.reserved}, pending holds ${l.pending}`)
    if (l.granted !== l.amount) problems.push(`${lot}: amount ${l.amount}, grant entries ${l.granted}`)
    if (l.consumedEntries !== l.consumed)
      problems.push(`${lot}: consumed ${l.consumed}, consume entries ${l.consumedEntries}`)
    if (l.reservedEntries - l.consumedEntries - l.releasedEntries !== l.reserved) {
      problems.push(
        `${lot}: reserved ${l.reserved}, entries reserve ${l.reservedEntries} - consume ${l.consumedEntries} - release ${l.releasedEntries}`
      )
    }
  }
  const organisations = new Set(lots.map((l) => l.organisationId))
  for (const org of organisations) {
    const own = lots.filter((l) => l.organisationId === org)
    const sum = (f: (l: LotFact) => number) => own.reduce((n, l) => n + f(l), 0)
    const free = (l: LotFact) => l.amount - l.reserved - l.consumed
    const [granted, consumed, reserved] = [sum((l) => l.amount), sum((l) => l.consumed), sum((l) => l.reserved)]
    const [available, expired] = [sum((l) => (l.expired ? 0 : free(l))), sum((l) => (l.expired ? free(l) : 0))]
    if (granted !== consumed + reserved + available + expired) {
      problems.push(
        `organisation ${org}: granted ${granted} != consumed ${consumed} + reserved ${reserved} + available ${available} + expired ${expired}`
      )
    }
    const held = messages.filter((m) => m.organisationId === org)
    const byMessages = {
      reserved: held.reduce((n, m) => n + m.pending, 0),
      consumed: held.reduce((n, m) => n + m.posted, 0)
    }
    if (byMessages.reserved !== reserved || byMessages.consumed !== consumed) {
      problems.push(
        `organisation ${org}: lots reserve ${reserved} and consume ${consumed}, its messages ${JSON.stringify(byMessages)}`
      )
    }
  }
  return problems
}
