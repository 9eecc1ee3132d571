/**
 * The tables of organisations and their registered sender names, owned here. The sending profile
 * (SMS enabled, the sender a message uses, whether it is active) is also exported as a fragment,
 * for the statements that judge it in passing: the one-statement admission and the start of due
 * messages; and so is its retention, for the statement that finds the messages past it.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../db/Statements.ts"
import type { ListPosition } from "../domain/NewestFirst.ts"

export interface Organisation {
  readonly id: string
  readonly name: string
  readonly smsEnabled: boolean
  readonly defaultSenderName: string
  /** Days its messages' personal data is kept once final; null: the service's default (SMS_RETENTION_DAYS). */
  readonly retentionDays: number | null
}

/** An organisation with the instant it was created (the list's order). */
export interface ListedOrganisation extends Organisation {
  readonly createdAt: Date
}

export interface Sender {
  readonly name: string
  readonly active: boolean
}

export interface SendingProfile {
  readonly smsEnabled: boolean
  readonly senderName: string
  readonly senderActive: boolean
}

const columns = "id::text, name, sms_enabled, default_sender_name, retention_days"

export class OrganisationStore extends Context.Service<
  OrganisationStore,
  {
    readonly insert: (organisation: Organisation, at: Date) => Fails<void>
    readonly find: (id: string) => Fails<Organisation | undefined>
    /** Writes what `organisation` says of SMS, the default sender and the retention. */
    readonly update: (organisation: Organisation) => Fails<void>
    /** At most `limit + 1` organisations newest first, after `after` (the extra one tells a next page exists). */
    readonly newestFirst: (limit: number, after: ListPosition | undefined) => Fails<ReadonlyArray<ListedOrganisation>>
    /** The organisation's senders by name; undefined when there is no such organisation. */
    readonly senders: (organisationId: string) => Fails<ReadonlyArray<Sender> | undefined>
    /** Registers a sender, or changes whether it is active (`keepExisting`: a known sender stays as it is). */
    readonly putSender: (organisationId: string, sender: Sender, at: Date, keepExisting: boolean) => Fails<void>
    /** The sending profile of a message with `requested` (else the default) sender; undefined when there is no such organisation. */
    readonly sendingProfile: (
      organisationId: string,
      requested: string | undefined
    ) => Fails<SendingProfile | undefined>
    readonly isEmpty: Fails<boolean>
  }
>()("sms/OrganisationStore") {
  static readonly layer = Layer.effect(
    OrganisationStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fragments = organisationFragments(sql)

      const putSender = (organisationId: string, sender: Sender, at: Date, keepExisting: boolean) =>
        keepExisting
          ? sql`INSERT INTO senders (organisation_id, name, active, updated_at)
            VALUES (${organisationId}, ${sender.name}, ${sender.active}, ${at}) ON CONFLICT DO NOTHING`
          : sql`INSERT INTO senders (organisation_id, name, active, updated_at)
            VALUES (${organisationId}, ${sender.name}, ${sender.active}, ${at})
            ON CONFLICT (organisation_id, name) DO UPDATE SET active = EXCLUDED.active, updated_at = EXCLUDED.updated_at`

      return OrganisationStore.of({
        insert: (o, at) =>
          fromDatabase(
            sql`INSERT INTO organisations (id, name, sms_enabled, default_sender_name, retention_days, created_at)
          VALUES (${o.id}, ${o.name}, ${o.smsEnabled}, ${o.defaultSenderName}, ${o.retentionDays}, ${at})`.pipe(
              Effect.asVoid
            )
          ),
        find: (id) =>
          fromDatabase(
            sql<Organisation>`SELECT ${sql.literal(columns)} FROM organisations WHERE id = ${id}`.pipe(
              Effect.map((rows) => rows[0])
            )
          ),
        update: (o) =>
          fromDatabase(
            sql`UPDATE organisations SET sms_enabled = ${o.smsEnabled}, default_sender_name = ${o.defaultSenderName},
          retention_days = ${o.retentionDays} WHERE id = ${o.id}`.pipe(Effect.asVoid)
          ),
        newestFirst: (limit, after) =>
          fromDatabase(sql<ListedOrganisation>`SELECT ${sql.literal(columns)}, created_at FROM organisations
          ${after === undefined ? sql`` : sql`WHERE (created_at, id) < (${after.createdAt}, ${after.id}::uuid)`}
          ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`),
        senders: (organisationId) =>
          // the organisation joined first: no row means no organisation, a null name means no sender
          fromDatabase(
            sql<{ name: string | null; active: boolean | null }>`SELECT s.name, s.active
          FROM organisations o LEFT JOIN senders s ON s.organisation_id = o.id
          WHERE o.id = ${organisationId} ORDER BY s.name`.pipe(
              Effect.map((rows) =>
                rows.length === 0
                  ? undefined
                  : rows.flatMap((r) => (r.name === null ? [] : [{ name: r.name, active: r.active === true }]))
              )
            )
          ),
        putSender: (organisationId, sender, at, keepExisting) =>
          fromDatabase(putSender(organisationId, sender, at, keepExisting).pipe(Effect.asVoid)),
        sendingProfile: (organisationId, requested) =>
          fromDatabase(
            sql<SendingProfile>`WITH ${fragments.sendingProfile(organisationId, requested)}
          SELECT sms_enabled, sender_name, sender_active FROM org`.pipe(Effect.map((rows) => rows[0]))
          ),
        isEmpty: fromDatabase(
          sql<{ n: number }>`SELECT count(*)::integer AS n FROM (SELECT 1 FROM organisations LIMIT 1) o`.pipe(
            Effect.map((rows) => rows[0]!.n === 0)
          )
        )
      })
    })
  )
}

/** Fragments of the statements that judge an organisation's sending profile, or its retention, in passing. */
export const organisationFragments = (sql: SqlClient.SqlClient) => ({
  /**
   * The CTE `org`: whether SMS is enabled for the organisation, the sender a message uses (the
   * requested one, else the default) and whether that sender is registered and active.
   */
  sendingProfile: (organisationId: string, requested: string | undefined) =>
    sql`org AS (
      SELECT o.sms_enabled, coalesce(${requested ?? null}::text, o.default_sender_name) AS sender_name,
        coalesce(s.active, false) AS sender_active
      FROM organisations AS o
      LEFT JOIN senders AS s ON s.organisation_id = o.id AND s.name = coalesce(${requested ?? null}::text, o.default_sender_name)
      WHERE o.id = ${organisationId})`,
  /**
   * The CTE `retention`: each organisation whose messages are erased once final for long
   * enough, with `cutoff`, the instant before which a message final since then is due for
   * erasure at `at` (its own `retention_days`, else `defaultDays`; none when both are unset).
   */
  retention: (defaultDays: number | undefined, at: Date) =>
    sql`retention AS (
      SELECT o.id AS organisation_id,
        ${at}::timestamptz - make_interval(days => coalesce(o.retention_days, ${defaultDays ?? null}::integer)) AS cutoff
      FROM organisations AS o
      WHERE coalesce(o.retention_days, ${defaultDays ?? null}::integer) IS NOT NULL)`,
  /** The CTE `organisation_ids`: the id of every organisation. */
  organisationIds: sql`organisation_ids AS (SELECT id FROM organisations)`,
  /**
   * The joins that give each row of `messages` (aliased `alias`) its organisation's `sms_enabled`
   * and, as `sender_active`, whether its sender is registered and active now.
   */
  sendability: (alias: string) =>
    sql`JOIN organisations AS o ON o.id = ${sql(alias)}.organisation_id
      LEFT JOIN senders AS s ON s.organisation_id = ${sql(alias)}.organisation_id AND s.name = ${sql(alias)}.sender_name`
})
