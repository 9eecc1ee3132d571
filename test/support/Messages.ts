/**
 * Message-level helpers over a TestApp: create over HTTP, read a message's status, timeline and
 * the organisation's balance, in the shapes the lifecycle suites assert.
 */
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import type { TestApp } from "./TestApp.ts"

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
export const create = async (app: TestApp, apiKey: string, c: Creation) => {
  const key = c.key ?? `key-${randomUUID()}`
  const reply = await app.call("POST", messagesPath, { token: apiKey, body: bodyOf(c), headers: { "idempotency-key": key } })
  const id: string | undefined = reply.body?.id ?? reply.body?.message_id
  expect(id, `no message id in ${reply.status} ${reply.text}`).toBeDefined()
  return { id: id!, reply, key }
}

/** The message's status as the API shows it. */
export const statusOf = async (app: TestApp, apiKey: string, id: string): Promise<string> => {
  const reply = await app.call("GET", `${messagesPath}${id}/`, { token: apiKey })
  expect(reply.status, reply.text).toBe(200)
  return reply.body.status
}

/** The organisation's balance (total, reserved, available) through the operator API. */
export const balanceOf = async (app: TestApp, orgId: string) => {
  const reply = await app.admin("GET", `/organizations/${orgId}`)
  expect(reply.status, reply.text).toBe(200)
  const { total, reserved, available } = reply.body.balance
  return { total, reserved, available }
}

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
export const snapshot = async (app: TestApp, orgId: string, apiKey: string, id: string, base: number): Promise<Snapshot> => {
  const reply = await app.call("GET", `${messagesPath}${id}/`, { token: apiKey })
  expect(reply.status, reply.text).toBe(200)
  const timeline = await app.timeline(orgId, id)
  return {
    status: reply.body.status,
    deliveryTime: reply.body.delivery_time === null ? null : Date.parse(reply.body.delivery_time) - base,
    transitions: timeline.map((t) => `${t.fromStatus ?? "-"}>${t.toStatus}@${t.source}`),
    at: timeline.map((t) => t.at.getTime() - base)
  }
}
