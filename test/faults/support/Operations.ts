/**
 * The mixed load of the fault tests, as an integrator sends it: immediate sends to every
 * simulator number and to ordinary ones (one and two segments), scheduled messages, batches and
 * contact upserts, each creation under its own Idempotency-Key. Every request's result is kept
 * (its answer, or the connection closing without one) with when it was sent and answered, so
 * that a test can replay each key identically and compare.
 */
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Served } from "../../support/ServedProcess.ts"
import type { CallOptions } from "../../support/TestApp.ts"

export type Kind = "immediate" | "scheduled" | "batch" | "contact"

export interface Operation {
  readonly kind: Kind
  /** The Idempotency-Key of a creation (contacts: a label; their upsert is idempotent by number). */
  readonly key: string
  readonly path: string
  readonly body: Readonly<Record<string, unknown>>
}

/** One request and what came back: its answer, or the connection closing without one (`closed` says how). */
export interface Exchange {
  readonly sentAt: number
  readonly answeredAt: number
  /** Undefined when the connection closed without an answer. */
  readonly status: number | undefined
  // biome-ignore lint/suspicious/noExplicitAny: bodies are compared as JSON and read field by field
  readonly body: any
  readonly retryAfter: string | null
  readonly replayed: boolean
  readonly closed: string | undefined
}

/** An operation's exchange. */
export interface Result extends Exchange {
  readonly op: Operation
}

const numbers = [...Object.values(testNumbers), "+261341234567", "+261329876543"]
const oneSegment = "Fault suite: your order has shipped."
const twoSegments = `Fault suite, two segments: ${"0123456789".repeat(20)}`.slice(0, 200)

/** The `i`-th operation of the mixed load, its schedules relative to `now` (ms), its key unique to `run`. */
export const mixedOperation = (run: string, i: number, now: number): Operation => {
  const key = `${run}-${i}`
  const text = i % 3 === 0 ? twoSegments : oneSegment
  const at = (fromMs: number, spreadMs: number) => new Date(now + fromMs + ((i * 7919) % spreadMs)).toISOString()
  switch (i % 8) {
    case 4:
      return {
        kind: "scheduled",
        key,
        path: "/api/sms/v2/messages/",
        body: { to: numbers[i % numbers.length], text, send_at: at(1_000, 4_000) }
      }
    case 5:
      return {
        kind: "batch",
        key,
        path: "/api/sms/v2/message-batches/",
        body: {
          recipients: Array.from({ length: 10 }, (_, j) => numbers[(i + j) % numbers.length]),
          text,
          send_at: at(1_500, 3_000)
        }
      }
    case 6:
      return {
        kind: "contact",
        key,
        path: "/api/sms/v2/contacts/",
        body: {
          phone_number: `+26133${String(i % 500).padStart(7, "0")}`,
          first_name: `Rabe ${i % 500}`,
          list_name: run
        }
      }
    default:
      return { kind: "immediate", key, path: "/api/sms/v2/messages/", body: { to: numbers[i % numbers.length], text } }
  }
}

/** Sends one request; a connection closed without an answer is an exchange too. */
export const exchange = async (
  served: Served,
  method: string,
  path: string,
  options: CallOptions = {}
): Promise<Exchange> => {
  const sentAt = Date.now()
  try {
    const reply = await served.call(method, path, options)
    return {
      sentAt,
      answeredAt: Date.now(),
      status: reply.status,
      body: reply.body,
      retryAfter: reply.headers.get("retry-after"),
      replayed: reply.headers.get("idempotent-replayed") === "true",
      closed: undefined
    }
  } catch (e) {
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : ""
    return {
      sentAt,
      answeredAt: Date.now(),
      status: undefined,
      body: undefined,
      retryAfter: null,
      replayed: false,
      closed: `${String(e)}${cause}`
    }
  }
}

/** Sends `op` once, as an integrator holding `apiKey`. */
export const perform = async (served: Served, apiKey: string, op: Operation): Promise<Result> => ({
  op,
  ...(await exchange(served, "POST", op.path, { token: apiKey, body: op.body, headers: { "idempotency-key": op.key } }))
})

/** The error code of an answer, if it is an error. */
export const codeOf = (r: Exchange): string | undefined => r.body?.error?.code

/** The message or batch (or contact) the answer names. */
export const resourceOf = (r: Exchange): string | undefined => {
  const id = r.body?.id ?? r.body?.message_id
  return id === undefined ? undefined : String(id)
}

/** Whether the answer is final for its key: not "try again later" (closed, 409 in progress, 503 without a message). */
export const isDefinite = (r: Exchange): boolean =>
  r.status !== undefined &&
  codeOf(r) !== "idempotency_in_progress" &&
  !(r.status === 503 && codeOf(r) === "service_unavailable")

/** Replays `op` identically, spaced by `intervalMs`, until its answer is definite or `deadline` (epoch ms) passes. */
export const replayUntilDefinite = async (
  served: Served,
  apiKey: string,
  op: Operation,
  deadline: number,
  intervalMs = 250
): Promise<Result> => {
  for (;;) {
    const result = await perform(served, apiKey, op)
    if (isDefinite(result) || Date.now() > deadline) return result
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/**
 * Sends `count` operations, the `i`-th made by `make(i)` when its turn comes (so that its
 * schedule is relative to when it is sent), through `clients` concurrent clients, until all are
 * sent or `stop()` says so; every result is pushed to `results` as it comes (so a test can kill
 * the service mid-load and still see what was answered).
 */
export const drive = async (options: {
  readonly count: number
  readonly make: (i: number) => Operation
  readonly send: (op: Operation, i: number) => Promise<Result>
  readonly clients: number
  readonly results: Array<Result>
  readonly stop?: () => boolean
}): Promise<void> => {
  let next = 0
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      while (next < options.count && !(options.stop?.() ?? false)) {
        const i = next++
        options.results.push(await options.send(options.make(i), i))
      }
    })
  )
}
