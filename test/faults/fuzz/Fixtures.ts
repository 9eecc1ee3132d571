/**
 * What the fuzz needs to exist before it starts, made through the service's own APIs: an
 * organisation with credits and keys of every kind (all permissions, one, none, revoked),
 * a second organisation (its ids must answer 404 to the first one's key), a spare one whose
 * settings and keys the fuzz may change, messages in several statuses, batches, and cursors.
 */
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import { adminToken, type Reply, organisationFactory, remoteCaller } from "../../support/TestApp.ts"

export interface Fixtures {
  readonly operatorToken: string
  readonly keys: {
    readonly full: string
    readonly deliveryOnly: string
    readonly noPermission: string
    readonly revoked: string
    /** The second organisation's key (all permissions). */
    readonly other: string
  }
  readonly orgs: { readonly main: string; readonly other: string; readonly spare: string }
  /** Keys of the spare organisation, for the revoke route. */
  readonly spareKeyIds: ReadonlyArray<string>
  readonly messageIds: ReadonlyArray<string>
  readonly otherMessageIds: ReadonlyArray<string>
  readonly batchIds: ReadonlyArray<string>
  readonly otherBatchIds: ReadonlyArray<string>
  /** Real `next_cursor` values: of the main batch's messages, and of the operator's lists. */
  readonly batchCursors: ReadonlyArray<string>
  readonly listCursors: ReadonlyArray<string>
  /** Sender names registered on the main organisation. */
  readonly senders: ReadonlyArray<string>
  /** The service clock when the fixtures were made (ms). */
  readonly now: number
}

const expectStatus = (reply: Reply, ...statuses: ReadonlyArray<number>): Reply => {
  if (!statuses.includes(reply.status))
    throw new Error(`fixture: expected ${statuses.join("/")}, got ${reply.status} ${reply.text.slice(0, 300)}`)
  return reply
}

/** Makes the fixtures on the service at `base`. */
export const makeFixtures = async (base: string): Promise<Fixtures> => {
  const call = remoteCaller(base)
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })
  const newOrg = organisationFactory(admin)
  const key = async (orgId: string, permissions: ReadonlyArray<string>) =>
    expectStatus(await admin("POST", `/organizations/${orgId}/api-keys`, { permissions }), 201).body as {
      key_id: string
      api_key: string
    }

  const main = await newOrg({ credits: 1_000_000_000, sender: "DEMO" })
  const other = await newOrg({ credits: 1000 })
  const spare = await newOrg({ credits: 10 })
  const deliveryOnly = await key(main.orgId, ["delivery.read"])
  const noPermission = await key(main.orgId, [])
  const revoked = await key(main.orgId, ["balance.read"])
  expectStatus(await admin("POST", `/api-keys/${revoked.key_id}/revoke`), 200)
  const spareKeys = [spare.keyId, (await key(spare.orgId, ["sms.send"])).key_id, (await key(spare.orgId, [])).key_id]

  const now = Date.parse((expectStatus(await admin("GET", "/clock"), 200).body as { now: string }).now)
  const tomorrow = new Date(now + 86_400_000).toISOString()
  let sequence = 0
  const create = async (apiKey: string, path: string, body: unknown) => {
    const reply = await call("POST", `/api/sms/v2/${path}/`, {
      token: apiKey,
      body,
      headers: { "idempotency-key": `fixture-${++sequence}` }
    })
    const id = reply.body as { id?: string; message_id?: string } | undefined
    const found = id?.id ?? id?.message_id
    if (found === undefined) throw new Error(`fixture: no id in ${reply.status} ${reply.text.slice(0, 300)}`)
    return found
  }
  const send = (apiKey: string, to: string, sendAt?: string) =>
    create(apiKey, "messages", { to, text: "Salama", ...(sendAt === undefined ? {} : { send_at: sendAt }) })

  const messageIds = [
    await send(main.apiKey, testNumbers.delivered),
    await send(main.apiKey, testNumbers.undeliverable),
    await send(main.apiKey, testNumbers.rejected),
    await send(main.apiKey, "+261341234567", tomorrow)
  ]
  const recipients = Array.from({ length: 150 }, (_, i) => `+26133${String(i).padStart(7, "0")}`)
  const batchIds = [await create(main.apiKey, "message-batches", { recipients, text: "Salama", send_at: tomorrow })]
  const otherMessageIds = [await send(other.apiKey, testNumbers.delivered)]
  const otherBatchIds = [
    await create(other.apiKey, "message-batches", {
      recipients: recipients.slice(0, 2),
      text: "Salama",
      send_at: tomorrow
    })
  ]

  const cursorOf = async (reply: Promise<Reply>) => {
    const cursor = (expectStatus(await reply, 200).body as { next_cursor: string | null }).next_cursor
    if (cursor === null) throw new Error("fixture: expected a next page")
    return cursor
  }
  const batchCursors = [
    await cursorOf(call("GET", `/api/sms/v2/message-batches/${batchIds[0]}/messages/`, { token: main.apiKey }))
  ]
  const listCursors = [
    await cursorOf(admin("GET", "/organizations?limit=1")),
    await cursorOf(admin("GET", `/organizations/${main.orgId}/messages?limit=1`))
  ]

  return {
    operatorToken: adminToken,
    keys: {
      full: main.apiKey,
      deliveryOnly: deliveryOnly.api_key,
      noPermission: noPermission.api_key,
      revoked: revoked.api_key,
      other: other.apiKey
    },
    orgs: { main: main.orgId, other: other.orgId, spare: spare.orgId },
    spareKeyIds: spareKeys,
    messageIds,
    otherMessageIds,
    batchIds,
    otherBatchIds,
    batchCursors,
    listCursors,
    senders: ["DEMO"],
    now
  }
}
