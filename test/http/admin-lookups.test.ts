/**
 * The operator API's lists and lookups: organisations (paged, newest first), an organisation's
 * API keys and senders, a message found by its id alone.
 */
import { afterAll, describe, expect, it } from "vitest"
import { adminToken, backend, makeTestApp } from "../support/TestApp.ts"
import { expectError, expectValidation } from "./helpers.ts"

const app = makeTestApp()
afterAll(() => app.dispose())

const unknownUuid = "00000000-0000-4000-8000-000000000000"
const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface ListedOrg {
  readonly id: string
  readonly name: string
  readonly sms_enabled: boolean
  readonly default_sender_name: string
  readonly created_at: string
}

const createOrg = async (name: string) => {
  const res = await app.admin("POST", "/organizations", { name })
  expect(res.status, res.text).toBe(201)
  return res.body as { id: string; name: string; sms_enabled: boolean; default_sender_name: string }
}

/** Follows next_cursor from the first page to the last (bounded), returning every page. */
const allPages = async (limit: number) => {
  const pages: Array<{ results: Array<ListedOrg>; next_cursor: string | null }> = []
  let cursor: string | null = null
  for (let i = 0; i < 1000; i++) {
    const query = `?limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const res = await app.admin("GET", `/organizations${query}`)
    expect(res.status, res.text).toBe(200)
    pages.push(res.body)
    cursor = res.body.next_cursor
    if (cursor === null) return pages
  }
  throw new Error("the organisation list did not end within 1000 pages")
}

/** Newest first: created_at descending, ties by id descending. */
const isNewestFirst = (orgs: ReadonlyArray<ListedOrg>) =>
  orgs.every((o, i) => {
    const prev = orgs[i - 1]
    return prev === undefined || prev.created_at > o.created_at || (prev.created_at === o.created_at && prev.id > o.id)
  })

describe(`GET /admin/v1/organizations (${backend})`, () => {
  it("lists organisations newest first with their fields and creation time", async () => {
    const first = await createOrg("Listed first")
    const second = await createOrg("Listed second")
    const res = await app.admin("GET", "/organizations")
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["next_cursor", "results"])
    const results: Array<ListedOrg> = res.body.results
    expect(results.length).toBeGreaterThanOrEqual(2)
    expect(results.length).toBeLessThanOrEqual(100)
    expect(isNewestFirst(results)).toBe(true)
    const mine = results.filter((o) => o.id === first.id || o.id === second.id)
    expect(mine.map(({ created_at: _, ...o }) => o).sort((a, b) => a.name.localeCompare(b.name))).toEqual([first, second])
    for (const o of mine) expect(o.created_at).toMatch(isoInstant)
    expect(mine.find((o) => o.id === second.id)!.created_at >= mine.find((o) => o.id === first.id)!.created_at).toBe(true)
  })

  it("pages with limit and next_cursor: every organisation once, in order, the last page without a cursor", async () => {
    const created: Array<string> = []
    for (const name of ["Paged A", "Paged B", "Paged C"]) created.push((await createOrg(name)).id)
    const pages = await allPages(2)
    expect(pages.length).toBeGreaterThanOrEqual(2)
    for (const page of pages.slice(0, -1)) expect(page.results.length).toBe(2)
    expect(pages[pages.length - 1]!.results.length).toBeGreaterThanOrEqual(1)
    const ids = pages.flatMap((p) => p.results.map((o) => o.id))
    expect(new Set(ids).size).toBe(ids.length)
    expect(isNewestFirst(pages.flatMap((p) => p.results))).toBe(true)
    for (const id of created) expect(ids).toContain(id)
  })

  it.each(["0", "101", "abc", "1.5", ""])("400 validation_error for limit=%j", async (limit) => {
    expect(expectValidation(await app.admin("GET", `/organizations?limit=${limit}`))).toContain("limit")
  })

  it.each(["garbage", Buffer.from(`2020-01-01T00:00:00.000Z|not-a-uuid`).toString("base64url")])(
    "400 invalid_cursor for cursor %s",
    async (cursor) => {
      expectError(await app.admin("GET", `/organizations?cursor=${cursor}`), 400, "invalid_cursor")
    }
  )

  it("needs the operator token", async () => {
    expectError(await app.call("GET", "/admin/v1/organizations"), 401, "invalid_api_key")
    const { apiKey } = await app.newOrg()
    expectError(await app.call("GET", "/admin/v1/organizations", { token: apiKey }), 401, "invalid_api_key")
  })
})

describe(`GET /admin/v1/organizations/{org_id}/api-keys (${backend})`, () => {
  it("lists ids, permissions, creation and revocation times, never a secret", async () => {
    const { orgId, keyId } = await app.newOrg({ permissions: ["sms.send", "balance.read"] })
    const second = await app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["delivery.read"] })
    expect(second.status, second.text).toBe(201)
    expect((await app.admin("POST", `/api-keys/${keyId}/revoke`)).status).toBe(200)

    const res = await app.admin("GET", `/organizations/${orgId}/api-keys`)
    expect(res.status, res.text).toBe(200)
    expect(Object.keys(res.body)).toEqual(["results"])
    const [revoked, live] = res.body.results
    expect(res.body.results).toHaveLength(2)
    for (const key of res.body.results) expect(Object.keys(key).sort()).toEqual(["created_at", "key_id", "permissions", "revoked_at"])
    expect(revoked).toMatchObject({ key_id: keyId, permissions: ["sms.send", "balance.read"] })
    expect(revoked.revoked_at).toMatch(isoInstant)
    expect(live).toMatchObject({ key_id: second.body.key_id, permissions: ["delivery.read"], revoked_at: null })
    expect(live.created_at).toMatch(isoInstant)
    expect(res.text).not.toContain(second.body.api_key.split(".")[1])
  })

  it("answers an empty list for an organisation without keys", async () => {
    const org = await createOrg("Keyless")
    const res = await app.admin("GET", `/organizations/${org.id}/api-keys`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ results: [] })
  })

  it.each([unknownUuid, "not-an-id"])("404 not_found for organisation %s", async (id) => {
    expectError(await app.admin("GET", `/organizations/${id}/api-keys`), 404, "not_found")
  })

  it("needs the operator token", async () => {
    const { orgId, apiKey } = await app.newOrg()
    expectError(await app.call("GET", `/admin/v1/organizations/${orgId}/api-keys`), 401, "invalid_api_key")
    expectError(await app.call("GET", `/admin/v1/organizations/${orgId}/api-keys`, { token: apiKey }), 401, "invalid_api_key")
  })
})

describe(`GET /admin/v1/organizations/{org_id}/senders (${backend})`, () => {
  it("lists the registered senders by name, with whether each is active", async () => {
    const org = await createOrg("Senders")
    expect((await app.admin("PUT", `/organizations/${org.id}/senders/PROMO`, { active: false })).status).toBe(200)
    expect((await app.admin("PUT", `/organizations/${org.id}/senders/ALERTS`, { active: true })).status).toBe(200)
    const res = await app.admin("GET", `/organizations/${org.id}/senders`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({
      results: [{ name: "ALERTS", active: true }, { name: "INFO", active: true }, { name: "PROMO", active: false }]
    })
  })

  it.each([unknownUuid, "not-an-id"])("404 not_found for organisation %s", async (id) => {
    expectError(await app.admin("GET", `/organizations/${id}/senders`), 404, "not_found")
  })

  it("needs the operator token", async () => {
    const org = await createOrg("Senders private")
    expectError(await app.call("GET", `/admin/v1/organizations/${org.id}/senders`), 401, "invalid_api_key")
    expectError(
      await app.call("GET", `/admin/v1/organizations/${org.id}/senders`, { headers: { authorization: `Bearer ${adminToken}x` } }),
      401,
      "invalid_api_key"
    )
  })
})

describe(`GET /admin/v1/messages/{message_id} (${backend})`, () => {
  it("finds a message without its organisation: the message, its org_id and its timeline", async () => {
    const { orgId, apiKey } = await app.newOrg({ credits: 10 })
    const sent = await app.call("POST", "/api/sms/v2/messages/", {
      token: apiKey,
      headers: { "idempotency-key": "admin-find-1" },
      body: { to: "+261340000001", text: "Salama" }
    })
    expect(sent.status, sent.text).toBe(201)

    const res = await app.admin("GET", `/messages/${sent.body.id}`)
    expect(res.status, res.text).toBe(200)
    const { timeline, org_id, ...message } = res.body
    expect(message).toEqual(sent.body)
    expect(org_id).toBe(orgId)
    expect(timeline.map((t: { from_status: string | null; to_status: string; source: string }) => [t.from_status, t.to_status, t.source]))
      .toEqual([[null, "processing", "admission"], ["processing", "accepted", "provider"]])
    for (const entry of timeline) expect(entry.at).toMatch(isoInstant)
    // the organisation-scoped read answers the same message and timeline
    const scoped = await app.admin("GET", `/organizations/${orgId}/messages/${sent.body.id}`)
    expect(scoped.body).toEqual({ ...message, timeline })
  })

  it.each([unknownUuid, "not-a-uuid"])("404 not_found for message %s", async (id) => {
    expectError(await app.admin("GET", `/messages/${id}`), 404, "not_found")
  })

  it("needs the operator token", async () => {
    const { apiKey } = await app.newOrg()
    expectError(await app.call("GET", `/admin/v1/messages/${unknownUuid}`), 401, "invalid_api_key")
    expectError(await app.call("GET", `/admin/v1/messages/${unknownUuid}`, { token: apiKey }), 401, "invalid_api_key")
  })
})
