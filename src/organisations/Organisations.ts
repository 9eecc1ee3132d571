/** Organisations and their registered sender names: the operator's view of a customer (tables: OrganisationStore). */
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { type InvalidCursor, NotFound } from "../domain/Errors.ts"
import { type ListPage, pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { Ids } from "../platform/Ids.ts"
import { now } from "../clock/Time.ts"
import {
  type ListedOrganisation,
  type Organisation,
  OrganisationStore,
  type Sender,
  type SendingProfile
} from "./OrganisationStore.ts"

export type { ListedOrganisation, Organisation, Sender, SendingProfile } from "./OrganisationStore.ts"

const orgNotFound = (id: string) => NotFound.withMessage(`No organisation ${id}`)

export class Organisations extends Context.Service<
  Organisations,
  {
    /** Creates an organisation with SMS enabled and its default sender registered active. */
    readonly create: (name: string, defaultSenderName: string) => Effect.Effect<Organisation, DatabaseUnavailable>
    /** The organisation, or NotFound. */
    readonly get: (id: string) => Effect.Effect<Organisation, NotFound | DatabaseUnavailable>
    /** Changes what is given; a new default sender is registered active unless already known. */
    readonly update: (
      id: string,
      changes: {
        readonly smsEnabled?: boolean
        readonly defaultSenderName?: string
        readonly retentionDays?: number | null
      }
    ) => Effect.Effect<Organisation, NotFound | DatabaseUnavailable>
    /** A page of at most `limit` organisations, newest first, after `cursor` (a `nextCursor` of a previous page). */
    readonly list: (
      limit: number,
      cursor: string | undefined
    ) => Effect.Effect<ListPage<ListedOrganisation>, InvalidCursor | DatabaseUnavailable>
    /** The organisation's registered senders by name, or NotFound. */
    readonly senders: (organisationId: string) => Effect.Effect<ReadonlyArray<Sender>, NotFound | DatabaseUnavailable>
    /** Registers a sender or changes whether it is active. */
    readonly setSender: (
      organisationId: string,
      name: string,
      active: boolean
    ) => Effect.Effect<Sender, NotFound | DatabaseUnavailable>
    /**
     * In one read: whether SMS is enabled for the organisation, the sender a message would use
     * (`requested`, else the default) and whether that sender is registered and active.
     */
    readonly sendingProfile: (
      organisationId: string,
      requested: string | undefined
    ) => Effect.Effect<SendingProfile, DatabaseUnavailable>
    /** Whether any organisation exists (start-up seeds a demo one otherwise). */
    readonly isEmpty: Effect.Effect<boolean, DatabaseUnavailable>
  }
>()("sms/Organisations") {
  static readonly layer = Layer.effect(
    Organisations,
    Effect.gen(function* () {
      const store = yield* OrganisationStore
      const { transaction } = yield* Transactions
      const ids = yield* Ids

      const find = (id: string) =>
        isUuid(id)
          ? Effect.flatMap(store.find(id), (o) => (o === undefined ? Effect.fail(orgNotFound(id)) : Effect.succeed(o)))
          : Effect.fail(orgNotFound(id))

      return Organisations.of({
        create: Effect.fn("Organisations.create")(function* (name, defaultSenderName) {
          const [id, at] = [yield* ids.uuid, yield* now]
          const organisation: Organisation = { id, name, smsEnabled: true, defaultSenderName, retentionDays: null }
          yield* Effect.gen(function* () {
            yield* store.insert(organisation, at)
            yield* store.putSender(id, { name: defaultSenderName, active: true }, at, false)
          }).pipe(transaction)
          return organisation
        }),
        get: (id) => find(id).pipe(Effect.withSpan("Organisations.get")),
        update: Effect.fn("Organisations.update")(function* (id, changes) {
          const at = yield* now
          return yield* Effect.gen(function* () {
            const next = { ...(yield* find(id)), ...changes }
            yield* store.update(next)
            if (changes.defaultSenderName !== undefined) {
              yield* store.putSender(id, { name: changes.defaultSenderName, active: true }, at, true)
            }
            return next
          }).pipe(transaction)
        }),
        list: Effect.fn("Organisations.list")(function* (limit, cursor) {
          return pageOf(yield* store.newestFirst(limit, yield* positionAfter(cursor)), limit)
        }),
        senders: Effect.fn("Organisations.senders")(function* (organisationId) {
          const senders = isUuid(organisationId) ? yield* store.senders(organisationId) : undefined
          return senders === undefined ? yield* orgNotFound(organisationId) : senders
        }),
        setSender: Effect.fn("Organisations.setSender")(function* (organisationId, name, active) {
          yield* find(organisationId)
          yield* store.putSender(organisationId, { name, active }, yield* now, false)
          return { name, active }
        }),
        // the key that authenticated the request names an existing organisation
        sendingProfile: (organisationId, requested) =>
          Effect.flatMap(store.sendingProfile(organisationId, requested), (p) =>
            p === undefined ? Effect.die(orgNotFound(organisationId)) : Effect.succeed(p)
          ),
        isEmpty: store.isEmpty
      })
    })
  ).pipe(Layer.provideMerge(OrganisationStore.layer))
}
