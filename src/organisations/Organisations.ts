/** Organisations and their registered sender names: the operator's view of a customer. */
import { Context, Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { inTransaction } from "../db/Transaction.ts"
import { InvalidCursor, NotFound } from "../domain/Errors.ts"
import { type ListPage, pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { Ids } from "../Ids.ts"
import { now } from "../Time.ts"

export interface Organisation {
  readonly id: string
  readonly name: string
  readonly smsEnabled: boolean
  readonly defaultSenderName: string
}

export interface Sender {
  readonly name: string
  readonly active: boolean
}

/** An organisation with the instant it was created (the list's order). */
export interface ListedOrganisation extends Organisation {
  readonly createdAt: Date
}

export interface SendingProfile {
  readonly smsEnabled: boolean
  readonly senderName: string
  readonly senderActive: boolean
}

const orgNotFound = (id: string) => NotFound.withMessage(`No organisation ${id}`)

export class Organisations extends Context.Service<Organisations, {
  /** Creates an organisation with SMS enabled and its default sender registered active. */
  readonly create: (name: string, defaultSenderName: string) => Effect.Effect<Organisation, SqlError.SqlError>
  /** The organisation, or NotFound. */
  readonly get: (id: string) => Effect.Effect<Organisation, NotFound | SqlError.SqlError>
  /** Changes what is given; a new default sender is registered active unless already known. */
  readonly update: (
    id: string,
    changes: { readonly smsEnabled?: boolean; readonly defaultSenderName?: string }
  ) => Effect.Effect<Organisation, NotFound | SqlError.SqlError>
  /** A page of at most `limit` organisations, newest first, after `cursor` (a `nextCursor` of a previous page). */
  readonly list: (limit: number, cursor: string | undefined) => Effect.Effect<ListPage<ListedOrganisation>, InvalidCursor | SqlError.SqlError>
  /** The organisation's registered senders by name, or NotFound. */
  readonly senders: (organisationId: string) => Effect.Effect<ReadonlyArray<Sender>, NotFound | SqlError.SqlError>
  /** Registers a sender or changes whether it is active. */
  readonly setSender: (organisationId: string, name: string, active: boolean) => Effect.Effect<Sender, NotFound | SqlError.SqlError>
  /**
   * In one read: whether SMS is enabled for the organisation, the sender a message would use
   * (`requested`, else the default) and whether that sender is registered and active.
   */
  readonly sendingProfile: (organisationId: string, requested: string | undefined) => Effect.Effect<SendingProfile, SqlError.SqlError>
  /** Whether any organisation exists (start-up seeds a demo one otherwise). */
  readonly isEmpty: Effect.Effect<boolean, SqlError.SqlError>
}>()("sms/Organisations") {
  static readonly layer = Layer.effect(Organisations, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* Ids

    const find = (id: string) =>
      isUuid(id)
        ? sql<Organisation>`SELECT id::text, name, sms_enabled, default_sender_name FROM organisations WHERE id = ${id}`.pipe(
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(orgNotFound(id)) : Effect.succeed(rows[0]))
        )
        : Effect.fail(orgNotFound(id))

    const upsertSender = (organisationId: string, name: string, active: boolean, at: Date, keepExisting: boolean) =>
      keepExisting
        ? sql`INSERT INTO senders (organisation_id, name, active, updated_at)
            VALUES (${organisationId}, ${name}, ${active}, ${at}) ON CONFLICT DO NOTHING`
        : sql`INSERT INTO senders (organisation_id, name, active, updated_at)
            VALUES (${organisationId}, ${name}, ${active}, ${at})
            ON CONFLICT (organisation_id, name) DO UPDATE SET active = EXCLUDED.active, updated_at = EXCLUDED.updated_at`

    return Organisations.of({
      create: Effect.fn("Organisations.create")(function*(name, defaultSenderName) {
        const [id, at] = [yield* ids.uuid, yield* now]
        yield* Effect.gen(function*() {
          yield* sql`INSERT INTO organisations (id, name, sms_enabled, default_sender_name, created_at)
            VALUES (${id}, ${name}, true, ${defaultSenderName}, ${at})`
          yield* upsertSender(id, defaultSenderName, true, at, false)
        }).pipe(inTransaction(sql))
        return { id, name, smsEnabled: true, defaultSenderName }
      }),
      get: (id) => find(id).pipe(Effect.withSpan("Organisations.get")),
      update: Effect.fn("Organisations.update")(function*(id, changes) {
        const at = yield* now
        return yield* Effect.gen(function*() {
          const current = yield* find(id)
          const next = {
            ...current,
            ...(changes.smsEnabled === undefined ? {} : { smsEnabled: changes.smsEnabled }),
            ...(changes.defaultSenderName === undefined ? {} : { defaultSenderName: changes.defaultSenderName })
          }
          yield* sql`UPDATE organisations SET sms_enabled = ${next.smsEnabled}, default_sender_name = ${next.defaultSenderName}
            WHERE id = ${id}`
          if (changes.defaultSenderName !== undefined) yield* upsertSender(id, changes.defaultSenderName, true, at, true)
          return next
        }).pipe(inTransaction(sql))
      }),
      list: Effect.fn("Organisations.list")(function*(limit, cursor) {
        const after = yield* positionAfter(cursor)
        // one more than asked tells whether a next page exists
        const rows = after === undefined
          ? yield* sql<ListedOrganisation>`SELECT id::text, name, sms_enabled, default_sender_name, created_at FROM organisations
              ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
          : yield* sql<ListedOrganisation>`SELECT id::text, name, sms_enabled, default_sender_name, created_at FROM organisations
              WHERE (created_at, id) < (${after.createdAt}, ${after.id}::uuid)
              ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`
        return pageOf(rows, limit)
      }),
      senders: Effect.fn("Organisations.senders")(function*(organisationId) {
        if (!isUuid(organisationId)) return yield* orgNotFound(organisationId)
        // the organisation joined first: no row means no organisation, a null name means no sender
        const rows = yield* sql<{ name: string | null; active: boolean | null }>`SELECT s.name, s.active
          FROM organisations o LEFT JOIN senders s ON s.organisation_id = o.id
          WHERE o.id = ${organisationId} ORDER BY s.name`
        if (rows.length === 0) return yield* orgNotFound(organisationId)
        return rows.flatMap((r) => (r.name === null ? [] : [{ name: r.name, active: r.active === true }]))
      }),
      setSender: Effect.fn("Organisations.setSender")(function*(organisationId, name, active) {
        yield* find(organisationId)
        yield* upsertSender(organisationId, name, active, yield* now, false)
        return { name, active }
      }),
      sendingProfile: (organisationId, requested) =>
        sql<SendingProfile>`SELECT o.sms_enabled, coalesce(${requested ?? null}::text, o.default_sender_name) AS sender_name,
            coalesce(s.active, false) AS sender_active
          FROM organisations o
          LEFT JOIN senders s ON s.organisation_id = o.id AND s.name = coalesce(${requested ?? null}::text, o.default_sender_name)
          WHERE o.id = ${organisationId}`.pipe(
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.die(orgNotFound(organisationId)) : Effect.succeed(rows[0]))
        ),
      isEmpty: sql<{ n: number }>`SELECT count(*)::integer AS n FROM (SELECT 1 FROM organisations LIMIT 1) o`.pipe(
        Effect.map((rows) => rows[0]!.n === 0)
      )
    })
  }))
}
