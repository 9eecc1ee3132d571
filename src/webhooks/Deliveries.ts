/**
 * The delivery of webhook events (docs/decisions.md#webhooks). Due deliveries are claimed with
 * `FOR UPDATE SKIP LOCKED` (any number of processes), at most `perEndpointInFlightMax` held per
 * endpoint, each for a lease longer than an attempt, so a process that dies lets them go. Each
 * attempt checks the endpoint's address again, signs the body (Standard Webhooks, with the
 * rotated-out secret beside the current one while it still signs; `webhook-timestamp` is the
 * attempt's real time even under the test clock), POSTs it and records what
 * came of it: a 2xx succeeds, a 410 disables the endpoint, anything else is tried again on the
 * schedule of domain/Webhooks.ts, on the service's clock, then given up.
 *
 * `runDue` attempts everything due now and waits for it (the test clock's advance); `start`
 * runs the background loop, which never waits for one attempt before starting the next, so a
 * slow endpoint delays no other.
 */
import { Cause, Context, Duration, Effect, Layer, Metric, Queue, Random } from "effect"
import { AppConfig } from "../config/Config.ts"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { webhookRetryDelayMs } from "../domain/Webhooks.ts"
import { webhookAttempts } from "../observability/Metrics.ts"
import { now, wallClock } from "../clock/Time.ts"
import { privateAddressProblem, refusedByAddressRules, resolveTarget } from "./Addresses.ts"
import { post } from "./Post.ts"
import { signatureHeader } from "./Signature.ts"
import { WebhookPayloads } from "./WebhookPayloads.ts"
import { type AttemptRecord, type ClaimedDelivery, WebhookStore } from "./WebhookStore.ts"

/** An attempt that has no 2xx within this is a failed one. */
export const attemptTimeoutMs = 10_000
/** How long a claim holds a delivery: longer than any attempt. */
const claimLeaseMs = 60_000
/** Most attempts in flight per endpoint, across processes. */
export const perEndpointInFlightMax = 8
/** Most attempts in flight per process. */
export const inFlightMax = 256
/** Most deliveries one claim takes. */
const claimSizeMax = 64
/** Longest the loop sleeps before looking for due deliveries again. */
const pollIntervalMs = 200
/** Most characters of `last_error`. */
const errorLengthMax = 4096

export class Deliveries extends Context.Service<
  Deliveries,
  {
    /** Attempts every delivery due at the clock's now and waits for them; returns how many it attempted. */
    readonly runDue: Effect.Effect<number, DatabaseUnavailable>
    /** The earliest instant after `after` a delivery may be claimed, if any (WebhookStore.nextDue). */
    readonly nextAt: (after: Date) => Effect.Effect<Date | undefined, DatabaseUnavailable>
    /** The background loop: claims due deliveries as they come and attempts them without waiting for each other. */
    readonly loop: Effect.Effect<never, DatabaseUnavailable>
  }
>()("sms/Deliveries") {
  static readonly layer = Layer.effect(
    Deliveries,
    Effect.gen(function* () {
      const store = yield* WebhookStore
      const payloads = yield* WebhookPayloads
      const { webhookAllowPrivate } = yield* AppConfig

      /** The next state of a delivery after an attempt that was not a 2xx or a 410. */
      const again = (d: ClaimedDelivery, statusCode: number | null, error: string) =>
        Effect.gen(function* () {
          const delay = webhookRetryDelayMs(d.attempts + 1, yield* Random.next)
          const at = yield* now
          return {
            organisationId: d.organisationId,
            endpointId: d.endpointId,
            eventId: d.eventId,
            state: delay === undefined ? "failed" : "pending",
            statusCode,
            error: error.slice(0, errorLengthMax),
            nextAttemptAt: delay === undefined ? null : new Date(at.getTime() + delay),
            disable: false
          } satisfies AttemptRecord
        })

      const attempt = (d: ClaimedDelivery): Effect.Effect<AttemptRecord, DatabaseUnavailable> =>
        Effect.gen(function* () {
          const at = yield* now
          // the header is the attempt's real time, which receivers check against theirs (Standard
          // Webhooks: within minutes); the body's timestamp is the transition's on the service's clock
          const timestamp = Math.floor((yield* wallClock).getTime() / 1000)
          const id = `evt_${d.eventId}`
          const body = JSON.stringify({
            type: d.type,
            timestamp: d.occurredAt.toISOString(),
            data: yield* payloads.data(d)
          })
          const url = new URL(d.url)
          const target = yield* Effect.result(resolveTarget(url, webhookAllowPrivate))
          if (target._tag === "Failure") {
            const why =
              target.failure === privateAddressProblem ? refusedByAddressRules : "the URL's host does not resolve"
            return yield* again(d, null, why)
          }
          const secrets =
            d.previousSecret !== null && d.previousSecretUntil !== null && d.previousSecretUntil > at
              ? [d.secret, d.previousSecret]
              : [d.secret]
          const result = yield* Effect.promise(() =>
            post(
              url,
              target.success,
              {
                "content-type": "application/json",
                "webhook-id": id,
                "webhook-timestamp": String(timestamp),
                "webhook-signature": signatureHeader(secrets, id, timestamp, body)
              },
              body,
              attemptTimeoutMs
            )
          )
          if (result._tag === "Failed") return yield* again(d, null, result.error)
          const base = {
            organisationId: d.organisationId,
            endpointId: d.endpointId,
            eventId: d.eventId,
            error: null,
            nextAttemptAt: null
          }
          if (result.status >= 200 && result.status < 300) {
            return { ...base, state: "succeeded", statusCode: result.status, disable: false } satisfies AttemptRecord
          }
          if (result.status === 410) {
            return {
              ...base,
              state: "failed",
              statusCode: 410,
              error: result.body.slice(0, errorLengthMax),
              disable: true
            } satisfies AttemptRecord
          }
          return yield* again(d, result.status, result.body === "" ? `HTTP ${result.status}` : result.body)
        }).pipe(
          Effect.tap((r) => Metric.update(webhookAttempts[r.state === "pending" ? "retried" : r.state], 1)),
          Effect.withSpan("Deliveries.attempt")
        )

      const claim = (limit: number) =>
        Effect.gen(function* () {
          const at = yield* now
          return yield* store.claimDue(at, new Date(at.getTime() + claimLeaseMs), limit, perEndpointInFlightMax)
        })

      const runDue = Effect.gen(function* () {
        let total = 0
        while (true) {
          const claimed = yield* claim(claimSizeMax)
          if (claimed.length === 0) return total
          const records = yield* Effect.forEach(claimed, attempt, { concurrency: "unbounded" })
          yield* store.record(records, yield* now)
          total += claimed.length
        }
      })

      const loop = Effect.gen(function* () {
        let inFlight = 0
        // an attempt that ends frees a place of its endpoint (at most 8 each): the loop claims again
        // at once rather than after the poll interval, which would cap an endpoint at 8 per interval
        const ended = yield* Queue.sliding<true>(1)
        const one = (d: ClaimedDelivery) =>
          attempt(d).pipe(
            Effect.flatMap((r) => Effect.flatMap(now, (at) => store.record([r], at))),
            Effect.catchCause((cause) =>
              Effect.logWarning(
                "webhook attempt not recorded; it is tried again when its claim runs out",
                Cause.squash(cause)
              )
            ),
            Effect.ensuring(Effect.sync(() => void inFlight--).pipe(Effect.andThen(Queue.offer(ended, true))))
          )
        while (true) {
          const free = Math.min(claimSizeMax, inFlightMax - inFlight)
          const claimed = free > 0 ? yield* claim(free) : []
          for (const d of claimed) {
            inFlight++
            yield* Effect.forkDetach(one(d))
          }
          if (free === 0 || claimed.length < free) {
            yield* Queue.take(ended).pipe(
              Effect.timeoutOrElse({ duration: Duration.millis(pollIntervalMs), orElse: () => Effect.succeed(true) })
            )
          }
        }
      })

      return Deliveries.of({
        runDue: Effect.withSpan(runDue, "Deliveries.runDue"),
        nextAt: store.nextDue,
        loop
      })
    })
  )
}
