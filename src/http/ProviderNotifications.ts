/**
 * The routes OneAPI providers POST their notifications to (docs/operators.md#oneapi-routes),
 * outside the public API's keys: `/providers/{entry}/receipts/{secret}` and
 * `/providers/{entry}/inbound/{secret}`, the secret the entry's (NotifySecret.ts), compared in
 * constant time. An unknown entry or a wrong secret is 404, a body that is not the notification
 * 400 `validation_error`, each counted (`sms_provider_notifications_refused_total`). What is
 * final is stored through the ProviderInbox before the 204, so a 204 is never a loss: a receipt
 * for a message whose provider ref is not recorded yet is 503 with Retry-After (the provider
 * sends it again; for an `unknown` send, the receipt is first kept as evidence that it was
 * taken), and so is a database that cannot store it.
 */
import { Effect, Layer, Metric, Result, type Schema, SchemaParser } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig, type AppConfigShape } from "../config/Config.ts"
import { now } from "../clock/Time.ts"
import { errorBody } from "../domain/Errors.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { type NotificationRefusal, notificationsRefused } from "../observability/Metrics.ts"
import { notifySecret, sameSecret } from "../provider/oneapi/NotifySecret.ts"
import {
  InboundNotification,
  inboundPart,
  ReceiptNotification,
  receiptOutcome
} from "../provider/oneapi/Notifications.ts"
import { ProviderInbox } from "../provider/Provider.ts"
import { retryAfterSeconds } from "./Edge.ts"
import { inboundPath, receiptsPath } from "./NotifyPaths.ts"

const noContent = HttpServerResponse.empty({ status: 204 })

const unavailable = (message: string) =>
  HttpServerResponse.jsonUnsafe(errorBody("service_unavailable", message), {
    status: 503,
    headers: { "retry-after": String(retryAfterSeconds) }
  })

const refused = (route: string, reason: NotificationRefusal) =>
  Metric.update(notificationsRefused({ route, reason }), 1)

/** The secret of each entry a notify path may name, by name: worked out once, when the routes are built. */
const secretsOf = (c: AppConfigShape): ReadonlyMap<string, string> =>
  new Map(
    (c.provider === "smpp" ? (c.smpp?.oneapi ?? []) : []).map((e) => [e.name, notifySecret(e.name, e.clientSecret)])
  )

/** What a database that could not answer or store makes the route say. */
const storeUnavailable = () => unavailable("The service is temporarily unavailable; retry later")

/**
 * The route the path names, once its secret is checked; else the 404 to answer. Both refusals
 * answer the same, so a wrong secret does not tell that the name exists.
 */
const authenticated = (secrets: ReadonlyMap<string, string>) =>
  Effect.gen(function* () {
    const params = yield* HttpRouter.params
    const entry = params.entry ?? ""
    const expected = secrets.get(entry)
    const notFound = HttpServerResponse.jsonUnsafe(errorBody("not_found", "No such resource"), { status: 404 })
    if (expected === undefined) {
      yield* refused("unknown", "unknown_route")
      return Result.fail(notFound)
    }
    if (!sameSecret(params.secret ?? "", expected)) {
      yield* refused(entry, "wrong_secret")
      // counted for alerts; logged at DEBUG only, so that guesses cannot flood the logs
      yield* Effect.logDebug("provider notification refused: wrong secret").pipe(Effect.annotateLogs({ route: entry }))
      return Result.fail(notFound)
    }
    return Result.succeed(entry)
  })

/** The body decoded by `schema`; else the 400 to answer (counted). */
const body = <A, I>(route: string, schema: Schema.Codec<A, I>) => {
  const decode = SchemaParser.decodeUnknownResult(schema)
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    const decoded = decode(json)
    if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
    yield* refused(route, "bad_body")
    return Result.fail(
      HttpServerResponse.jsonUnsafe(errorBody("validation_error", "The body is not a OneAPI notification"), {
        status: 400
      })
    )
  })
}

const receiptRoute = (secrets: ReadonlyMap<string, string>) =>
  HttpRouter.add(
    "POST",
    receiptsPath,
    Effect.gen(function* () {
      const route = yield* authenticated(secrets)
      if (Result.isFailure(route)) return route.failure
      const notification = yield* body(route.success, ReceiptNotification)
      if (Result.isFailure(notification)) return notification.failure
      const { deliveryInfo, callbackData } = notification.success.deliveryInfoNotification
      const outcome = receiptOutcome(deliveryInfo.deliveryStatus)
      if (outcome === undefined) return noContent
      const message = yield* (yield* MessageStore).providerRefOf(callbackData).pipe(Effect.result)
      if (Result.isFailure(message)) return storeUnavailable()
      if (message.success === undefined) {
        // no such message: telling it again would not find one either
        yield* refused(route.success, "unknown_message")
        return noContent
      }
      const { organisationId, providerRef, toNumber, status } = message.success
      if (providerRef === null) {
        // its send was unknown: a receipt proves the provider took it, kept as evidence for the
        // verifier (which records it accepted under this ref), and the provider tells it again
        if (status === "unknown") {
          const evidence = yield* (yield* ProviderInbox)
            .lateResult({
              organisationId,
              messageId: callbackData,
              result: { _tag: "Accepted", providerRef: `${route.success}:c:${callbackData}` }
            })
            .pipe(Effect.result)
          if (Result.isFailure(evidence)) return storeUnavailable()
        }
        // its answer is not recorded yet: the provider keeps the receipt and tells it again
        return unavailable("The message's acceptance is not recorded yet; retry later")
      }
      const stored = yield* (yield* ProviderInbox)
        .receipt({ providerRef, outcome, occurredAt: yield* now, recipient: toNumber, submittedAt: null })
        .pipe(Effect.result)
      return Result.isSuccess(stored) ? noContent : storeUnavailable()
    }),
    { uninterruptible: true }
  )

const inboundRoute = (secrets: ReadonlyMap<string, string>) =>
  HttpRouter.add(
    "POST",
    inboundPath,
    Effect.gen(function* () {
      const route = yield* authenticated(secrets)
      if (Result.isFailure(route)) return route.failure
      const notification = yield* body(route.success, InboundNotification)
      if (Result.isFailure(notification)) return notification.failure
      const stored = yield* (yield* ProviderInbox)
        .mobileOriginated(inboundPart(route.success, notification.success))
        .pipe(Effect.result)
      return Result.isSuccess(stored) ? noContent : storeUnavailable()
    }),
    { uninterruptible: true }
  )

export const ProviderNotificationRoutes = Layer.unwrap(
  Effect.map(AppConfig, (c) => {
    const secrets = secretsOf(c)
    return Layer.mergeAll(receiptRoute(secrets), inboundRoute(secrets))
  })
)
