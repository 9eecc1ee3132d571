/**
 * Status webhooks (docs/decisions.md#webhooks): an organisation's endpoints (at most ten), created under
 * an Idempotency-Key with their secret shown once, read, changed, deleted, their secret rotated
 * (the old one signs beside the new for a day), and their delivery log, retried or tested on
 * demand. The events themselves are written by the status changes (WebhookStore's outbox) and
 * sent by the delivery workers (Deliveries.ts).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable, Fails } from "../db/DatabaseUnavailable.ts"
import { Transactions } from "../db/Transactions.ts"
import { type InvalidCursor, NotFound, ValidationError } from "../domain/Errors.ts"
import { type ListPage, pageOf, positionAfter } from "../domain/NewestFirst.ts"
import { isUuid } from "../domain/Uuid.ts"
import { urlSyntaxProblem, webhookEndpointsMax, WebhookEventTypes } from "../domain/Webhooks.ts"
import type { Answer } from "../idempotency/Answer.ts"
import { Idempotency, type ClaimError } from "../idempotency/Idempotency.ts"
import { Ids } from "../platform/Ids.ts"
import { now } from "../clock/Time.ts"
import { privateAddressProblem, refusedByAddressRules, resolveTarget } from "./Addresses.ts"
import { WebhookAnswers } from "./WebhookAnswers.ts"
import { type DeliveryRow, type EndpointChanges, type EndpointRow, WebhookStore } from "./WebhookStore.ts"

/** How long a rotated-out secret keeps signing. */
export const secretOverlapMs = 24 * 3_600_000
/** Random bytes of a secret. */
const secretBytes = 24
/** Longest the operator's view waits for an endpoint's host to resolve. */
const lookupTimeoutMs = 2_000
/** Lines of the delivery log per page. */
export const deliveriesPageSize = 100

export interface EndpointRequest {
  readonly url: string
  readonly events: ReadonlyArray<string> | undefined
  readonly description: string | undefined
}

export class Webhooks extends Context.Service<
  Webhooks,
  {
    /** Creates an endpoint under an idempotency key, or replays the answer stored for it; refuses a URL of the rules and an eleventh endpoint. */
    readonly create: (
      organisationId: string,
      key: string,
      fingerprint: string,
      request: EndpointRequest
    ) => Effect.Effect<
      { readonly answer: Answer; readonly replayed: boolean },
      ValidationError | ClaimError | DatabaseUnavailable
    >
    /** The organisation's endpoints, newest first. */
    readonly list: (organisationId: string) => Effect.Effect<ReadonlyArray<EndpointRow>, DatabaseUnavailable>
    /**
     * Why the address rules refuse `url` now, or null: an endpoint registered while they allowed
     * it (SMS_WEBHOOK_ALLOW_PRIVATE, true under the simulator) keeps its URL after a restart that
     * forbids it, and its deliveries fail. A host that does not resolve (now) is no refusal.
     */
    readonly urlRefusal: (url: string) => Effect.Effect<string | null>
    /** Logs a WARN for each enabled endpoint whose URL the address rules refuse (once, at start). */
    readonly warnRefusedEndpoints: Effect.Effect<void, DatabaseUnavailable>
    readonly get: (organisationId: string, id: string) => Fails<EndpointRow, NotFound>
    readonly update: (
      organisationId: string,
      id: string,
      changes: EndpointChanges
    ) => Fails<EndpointRow, ValidationError | NotFound>
    /** Deletes the endpoint; its pending deliveries are dropped. */
    readonly remove: (organisationId: string, id: string) => Fails<void, NotFound>
    /** A new secret; the current one keeps signing beside it for `secretOverlapMs`. */
    readonly rotateSecret: (organisationId: string, id: string) => Fails<string, NotFound>
    /** A page of the endpoint's delivery log, newest first. */
    readonly deliveries: (
      organisationId: string,
      id: string,
      cursor: string | undefined
    ) => Fails<ListPage<DeliveryRow>, InvalidCursor | NotFound>
    /** Makes a delivery due now, a failed one too. */
    readonly retry: (organisationId: string, id: string, eventId: string) => Fails<void, NotFound>
    /** Sends a `webhook.test` event to the endpoint. */
    readonly test: (organisationId: string, id: string) => Fails<void, NotFound>
  }
>()("sms/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function* () {
      const store = yield* WebhookStore
      const { transaction } = yield* Transactions
      const idempotency = yield* Idempotency
      const ids = yield* Ids
      const answers = yield* WebhookAnswers
      const { webhookAllowPrivate } = yield* AppConfig

      const noSuchEndpoint = NotFound.withMessage("No such webhook endpoint")
      const found = <A>(row: A | undefined) => (row === undefined ? Effect.fail(noSuchEndpoint) : Effect.succeed(row))
      const exists = (organisationId: string, id: string) =>
        (isUuid(id) ? store.find(organisationId, id) : Effect.succeed(undefined)).pipe(Effect.flatMap(found))

      const invalid = (field: string, message: string) =>
        ValidationError.withMessage(`The ${field} is not allowed`, { details: [{ field, message }] })

      /** The URL if the rules allow it. */
      const checkUrl = (raw: string) =>
        Effect.gen(function* () {
          const problem = urlSyntaxProblem(raw)
          if (problem !== undefined) return yield* invalid("url", problem)
          yield* resolveTarget(new URL(raw), webhookAllowPrivate).pipe(Effect.mapError((why) => invalid("url", why)))
          return raw
        })

      const urlRefusal = (raw: string): Effect.Effect<string | null> => {
        // with private addresses allowed the rules refuse nothing: no lookup
        if (webhookAllowPrivate) return Effect.succeed(null)
        const url = URL.parse(raw)
        if (url === null) return Effect.succeed(null)
        return resolveTarget(url, false).pipe(
          Effect.timeoutOrElse({ duration: Duration.millis(lookupTimeoutMs), orElse: () => Effect.fail("") }),
          Effect.match({
            onFailure: (why) => (why === privateAddressProblem ? refusedByAddressRules : null),
            onSuccess: () => null
          })
        )
      }

      const warnRefusedEndpoints = Effect.gen(function* () {
        if (webhookAllowPrivate) return
        const endpoints = yield* store.enabledEndpoints
        yield* Effect.forEach(
          endpoints,
          (e) =>
            Effect.flatMap(urlRefusal(e.url), (why) =>
              why === null
                ? Effect.void
                : // the host only: a URL's path or query may carry the receiver's token
                  Effect.logWarning(
                    "a webhook endpoint's URL is refused by the address rules (SMS_WEBHOOK_ALLOW_PRIVATE is false): its deliveries fail until its URL changes"
                  ).pipe(
                    Effect.annotateLogs({
                      webhook_id: e.id,
                      organisation_id: e.organisationId,
                      host: URL.parse(e.url)?.hostname ?? ""
                    })
                  )
            ),
          { concurrency: 8, discard: true }
        )
      })

      const newSecret = Effect.map(
        ids.secret(secretBytes),
        (s) => `whsec_${Buffer.from(s, "base64url").toString("base64")}`
      )

      return Webhooks.of({
        create: Effect.fn("Webhooks.create")(function* (
          organisationId: string,
          key: string,
          fingerprint: string,
          request: EndpointRequest
        ) {
          yield* checkUrl(request.url)
          const secret = yield* newSecret
          const endpoint: EndpointRow = {
            id: yield* ids.uuid,
            url: request.url,
            events: request.events ?? [...WebhookEventTypes],
            description: request.description ?? null,
            enabled: true,
            createdAt: yield* now
          }
          const answer = answers.answer(endpoint, secret)
          return yield* Effect.gen(function* () {
            const claim = yield* idempotency.claim({ organisationId, route: "webhooks", key, fingerprint, answer })
            if (claim._tag === "Replay") return { answer: claim.answer, replayed: true }
            if ((yield* store.lockAndCount(organisationId)) >= webhookEndpointsMax) {
              return yield* ValidationError.withMessage(
                `An organisation has at most ${webhookEndpointsMax} webhook endpoints; delete one first`
              )
            }
            yield* store.insert(organisationId, { ...endpoint, secret })
            return { answer, replayed: false }
          }).pipe(transaction)
        }),
        list: (organisationId) => store.list(organisationId),
        urlRefusal,
        warnRefusedEndpoints,
        get: exists,
        update: Effect.fn("Webhooks.update")(function* (organisationId: string, id: string, changes: EndpointChanges) {
          yield* exists(organisationId, id)
          if (changes.url !== undefined) yield* checkUrl(changes.url)
          return yield* found(yield* store.update(organisationId, id, changes, yield* now))
        }),
        remove: Effect.fn("Webhooks.remove")(function* (organisationId: string, id: string) {
          if (!isUuid(id) || !(yield* store.remove(organisationId, id))) return yield* noSuchEndpoint
        }),
        rotateSecret: Effect.fn("Webhooks.rotateSecret")(function* (organisationId: string, id: string) {
          yield* exists(organisationId, id)
          const secret = yield* newSecret
          const at = yield* now
          if (!(yield* store.rotate(organisationId, id, secret, new Date(at.getTime() + secretOverlapMs), at)))
            return yield* noSuchEndpoint
          return secret
        }),
        deliveries: Effect.fn("Webhooks.deliveries")(function* (
          organisationId: string,
          id: string,
          cursor: string | undefined
        ) {
          yield* exists(organisationId, id)
          const after = yield* positionAfter(cursor)
          const rows = yield* store.deliveries(organisationId, id, deliveriesPageSize, after)
          const page = pageOf(
            rows.map((r) => ({ ...r, id: r.eventId })),
            deliveriesPageSize
          )
          return page
        }),
        retry: Effect.fn("Webhooks.retry")(function* (organisationId: string, id: string, eventId: string) {
          const event = /^evt_(.*)$/.exec(eventId)?.[1] ?? eventId
          if (!isUuid(id) || !isUuid(event) || !(yield* store.retryNow(organisationId, id, event, yield* now))) {
            return yield* NotFound.withMessage("No such delivery")
          }
        }),
        test: Effect.fn("Webhooks.test")(function* (organisationId: string, id: string) {
          yield* exists(organisationId, id)
          yield* store.insertTest(organisationId, id, yield* ids.uuid, yield* now)
        })
      })
    })
  )
}
