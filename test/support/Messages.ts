/**
 * Message-level helpers over the app (App): create over HTTP, read a message's status, timeline
 * and the organisation's balance, in the shapes the lifecycle suites assert.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { App } from "./TestApp.ts"

export const messagesPath = "/api/sms/v2/messages/"

export interface Creation {
  readonly to: string
  readonly text: string
  readonly sender_name?: string
  /** Absent: an immediate send; present: scheduled at this instant (ms). */
  readonly sendAt?: number
  readonly key?: string
}

/** The JSON body a creation sends. */
export const bodyOf = (c: Creation) => ({
  to: c.to,
  text: c.text,
  ...(c.sender_name === undefined ? {} : { sender_name: c.sender_name }),
  ...(c.sendAt === undefined ? {} : { send_at: new Date(c.sendAt).toISOString() })
})

/** POSTs the creation under its key (a fresh one by default); returns the reply, the message id and the key. */
export const create = (apiKey: string, c: Creation) =>
  Effect.gen(function* () {
    const key = c.key ?? `key-${randomUUID()}`
    const reply = yield* (yield* App).call("POST", messagesPath, {
      token: apiKey,
      body: bodyOf(c),
      headers: { "idempotency-key": key }
    })
    const id: string | undefined = reply.body?.id ?? reply.body?.message_id
    expect(id, `no message id in ${reply.status} ${reply.text}`).toBeDefined()
    return { id: id!, reply, key }
  })

/** The message's status as the API shows it. */
export const statusOf = (apiKey: string, id: string): Effect.Effect<string, never, App> =>
  Effect.gen(function* () {
    const reply = yield* (yield* App).call("GET", `${messagesPath}${id}/`, { token: apiKey })
    expect(reply.status, reply.text).toBe(200)
    return reply.body.status
  })

/** The organisation's balance (total, reserved, available) through the operator API. */
export const balanceOf = (orgId: string) =>
  Effect.gen(function* () {
    const reply = yield* (yield* App).admin("GET", `/organizations/${orgId}`)
    expect(reply.status, reply.text).toBe(200)
    const { total, reserved, available } = reply.body.balance
    return { total, reserved, available }
  })

export interface Snapshot {
  readonly status: string
  /** delivery_time relative to `base`, ms. */
  readonly deliveryTime: number | null
  /** `from>to@source`, oldest first. */
  readonly transitions: ReadonlyArray<string>
  /** Transition instants relative to `base`, ms. */
  readonly at: ReadonlyArray<number>
}

/** The message's status, delivery time and timeline, times relative to `base`. */
export const snapshot = (
  orgId: string,
  apiKey: string,
  id: string,
  base: number
): Effect.Effect<Snapshot, never, App> =>
  Effect.gen(function* () {
    const app = yield* App
    const reply = yield* app.call("GET", `${messagesPath}${id}/`, { token: apiKey })
    expect(reply.status, reply.text).toBe(200)
    const timeline = yield* app.timeline(orgId, id)
    return {
      status: reply.body.status,
      deliveryTime: reply.body.delivery_time === null ? null : Date.parse(reply.body.delivery_time) - base,
      transitions: timeline.map((t) => `${t.fromStatus ?? "-"}>${t.toStatus}@${t.source}`),
      at: timeline.map((t) => t.at.getTime() - base)
    }
  })
