/**
 * The operator API's lists and lookups: organisations (paged, newest first), an organisation's
 * API keys and senders, a message found by its id alone.
 */
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { adminToken, App, backend, withApp } from "../support/TestApp.ts"
import { expectError, expectValidation } from "./helpers.ts"

const unknownUuid = "00000000-0000-4000-8000-000000000000"
const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface ListedOrg {
  readonly id: string
  readonly name: string
  readonly sms_enabled: boolean
  readonly default_sender_name: string
  readonly created_at: string
}

const createOrg = (name: string) =>
  Effect.gen(function* () {
    const app = yield* App
    const res = yield* app.admin("POST", "/organizations", { name })
    expect(res.status, res.text).toBe(201)
    return res.body as { id: string; name: string; sms_enabled: boolean; default_sender_name: string }
  })

/** Follows next_cursor from the first page to the last (bounded), returning every page. */
const allPages = (limit: number) =>
  Effect.gen(function* () {
    const app = yield* App
    const pages: Array<{ results: Array<ListedOrg>; next_cursor: string | null }> = []
    let cursor: string | null = null
    for (let i = 0; i < 1000; i++) {
      const query: string = `?limit=${limit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const res = yield* app.admin("GET", `/organizations${query}`)
      expect(res.status, res.text).toBe(200)
      pages.push(res.body)
      cursor = res.body.next_cursor
      if (cursor === null) return pages
    }
    throw new Error("the organisation list did not end within 1000 pages")
  })

/** Newest first: created_at descending, ties by id descending. */
const isNewestFirst = (orgs: ReadonlyArray<ListedOrg>) =>
  orgs.every((o, i) => {
    const prev = orgs[i - 1]
    return prev === undefined || prev.created_at > o.created_at || (prev.created_at === o.created_at && prev.id > o.id)
  })

withApp()((it) => {
  describe(`GET /admin/v1/organizations (${backend})`, () => {
    it.effect("lists organisations newest first with their fields and creation time", () =>
      Effect.gen(function* () {
        const app = yield* App
        const first = yield* createOrg("Listed first")
        const second = yield* createOrg("Listed second")
        const res = yield* app.admin("GET", "/organizations")
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.body).sort()).toEqual(["next_cursor", "results"])
        const results: Array<ListedOrg> = res.body.results
        expect(results.length).toBeGreaterThanOrEqual(2)
        expect(results.length).toBeLessThanOrEqual(100)
        expect(isNewestFirst(results)).toBe(true)
        const mine = results.filter((o) => o.id === first.id || o.id === second.id)
        expect(mine.map(({ created_at: _, ...o }) => o).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
          first,
          second
        ])
        for (const o of mine) expect(o.created_at).toMatch(isoInstant)
        expect(
          mine.find((o) => o.id === second.id)!.created_at >= mine.find((o) => o.id === first.id)!.created_at
        ).toBe(true)
      })
    )

    it.effect(
      "pages with limit and next_cursor: every organisation once, in order, the last page without a cursor",
      () =>
        Effect.gen(function* () {
          const created: Array<string> = []
          for (const name of ["Paged A", "Paged B", "Paged C"]) created.push((yield* createOrg(name)).id)
          const pages = yield* allPages(2)
          expect(pages.length).toBeGreaterThanOrEqual(2)
          for (const page of pages.slice(0, -1)) expect(page.results.length).toBe(2)
          expect(pages[pages.length - 1]!.results.length).toBeGreaterThanOrEqual(1)
          const ids = pages.flatMap((p) => p.results.map((o) => o.id))
          expect(new Set(ids).size).toBe(ids.length)
          expect(isNewestFirst(pages.flatMap((p) => p.results))).toBe(true)
          for (const id of created) expect(ids).toContain(id)
        })
    )

    it.effect.each(["0", "101", "abc", "1.5", ""])("400 validation_error for limit=%j", (limit) =>
      Effect.gen(function* () {
        const app = yield* App
        expect(expectValidation(yield* app.admin("GET", `/organizations?limit=${limit}`))).toContain("limit")
      })
    )

    it.effect.each(["garbage", Buffer.from(`2020-01-01T00:00:00.000Z|not-a-uuid`).toString("base64url")])(
      "400 invalid_cursor for cursor %s",
      (cursor) =>
        Effect.gen(function* () {
          const app = yield* App
          expectError(yield* app.admin("GET", `/organizations?cursor=${cursor}`), 400, "invalid_cursor")
        })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.call("GET", "/admin/v1/organizations"), 401, "invalid_api_key")
        const { apiKey } = yield* app.newOrg()
        expectError(yield* app.call("GET", "/admin/v1/organizations", { token: apiKey }), 401, "invalid_api_key")
      })
    )
  })

  describe(`GET /admin/v1/organizations/{org_id}/api-keys (${backend})`, () => {
    it.effect("lists ids, permissions, creation and revocation times, never a secret", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, keyId } = yield* app.newOrg({ permissions: ["sms.send", "balance.read"] })
        const second = yield* app.admin("POST", `/organizations/${orgId}/api-keys`, { permissions: ["delivery.read"] })
        expect(second.status, second.text).toBe(201)
        expect((yield* app.admin("POST", `/api-keys/${keyId}/revoke`)).status).toBe(200)

        const res = yield* app.admin("GET", `/organizations/${orgId}/api-keys`)
        expect(res.status, res.text).toBe(200)
        expect(Object.keys(res.body)).toEqual(["results"])
        const [revoked, live] = res.body.results
        expect(res.body.results).toHaveLength(2)
        for (const key of res.body.results)
          expect(Object.keys(key).sort()).toEqual(["created_at", "key_id", "permissions", "revoked_at"])
        expect(revoked).toMatchObject({ key_id: keyId, permissions: ["sms.send", "balance.read"] })
        expect(revoked.revoked_at).toMatch(isoInstant)
        expect(live).toMatchObject({ key_id: second.body.key_id, permissions: ["delivery.read"], revoked_at: null })
        expect(live.created_at).toMatch(isoInstant)
        expect(res.text).not.toContain(second.body.api_key.split(".")[1])
      })
    )

    it.effect("answers an empty list for an organisation without keys", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg("Keyless")
        const res = yield* app.admin("GET", `/organizations/${org.id}/api-keys`)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({ results: [] })
      })
    )

    it.effect.each([unknownUuid, "not-an-id"])("404 not_found for organisation %s", (id) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("GET", `/organizations/${id}/api-keys`), 404, "not_found")
      })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg()
        expectError(yield* app.call("GET", `/admin/v1/organizations/${orgId}/api-keys`), 401, "invalid_api_key")
        expectError(
          yield* app.call("GET", `/admin/v1/organizations/${orgId}/api-keys`, { token: apiKey }),
          401,
          "invalid_api_key"
        )
      })
    )
  })

  describe(`GET /admin/v1/organizations/{org_id}/senders (${backend})`, () => {
    it.effect("lists the registered senders by name, with whether each is active", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg("Senders")
        expect((yield* app.admin("PUT", `/organizations/${org.id}/senders/PROMO`, { active: false })).status).toBe(200)
        expect((yield* app.admin("PUT", `/organizations/${org.id}/senders/ALERTS`, { active: true })).status).toBe(200)
        const res = yield* app.admin("GET", `/organizations/${org.id}/senders`)
        expect(res.status, res.text).toBe(200)
        expect(res.body).toEqual({
          results: [
            { name: "ALERTS", active: true },
            { name: "INFO", active: true },
            { name: "PROMO", active: false }
          ]
        })
      })
    )

    it.effect.each([unknownUuid, "not-an-id"])("404 not_found for organisation %s", (id) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("GET", `/organizations/${id}/senders`), 404, "not_found")
      })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        const org = yield* createOrg("Senders private")
        expectError(yield* app.call("GET", `/admin/v1/organizations/${org.id}/senders`), 401, "invalid_api_key")
        expectError(
          yield* app.call("GET", `/admin/v1/organizations/${org.id}/senders`, {
            headers: { authorization: `Bearer ${adminToken}x` }
          }),
          401,
          "invalid_api_key"
        )
      })
    )
  })

  describe(`GET /admin/v1/messages/{message_id} (${backend})`, () => {
    it.effect("finds a message without its organisation: the message, its org_id and its timeline", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { orgId, apiKey } = yield* app.newOrg({ credits: 10 })
        const sent = yield* app.call("POST", "/api/sms/v2/messages/", {
          token: apiKey,
          headers: { "idempotency-key": "admin-find-1" },
          body: { to: "+261340000001", text: "Salama" }
        })
        expect(sent.status, sent.text).toBe(201)

        const res = yield* app.admin("GET", `/messages/${sent.body.id}`)
        expect(res.status, res.text).toBe(200)
        const { timeline, org_id, ...message } = res.body
        expect(message).toEqual(sent.body)
        expect(org_id).toBe(orgId)
        expect(
          timeline.map((t: { from_status: string | null; to_status: string; source: string }) => [
            t.from_status,
            t.to_status,
            t.source
          ])
        ).toEqual([
          [null, "processing", "admission"],
          ["processing", "accepted", "provider"]
        ])
        for (const entry of timeline) expect(entry.at).toMatch(isoInstant)
        // the organisation-scoped read answers the same message and timeline
        const scoped = yield* app.admin("GET", `/organizations/${orgId}/messages/${sent.body.id}`)
        expect(scoped.body).toEqual({ ...message, timeline })
      })
    )

    it.effect.each([unknownUuid, "not-a-uuid"])("404 not_found for message %s", (id) =>
      Effect.gen(function* () {
        const app = yield* App
        expectError(yield* app.admin("GET", `/messages/${id}`), 404, "not_found")
      })
    )

    it.effect("needs the operator token", () =>
      Effect.gen(function* () {
        const app = yield* App
        const { apiKey } = yield* app.newOrg()
        expectError(yield* app.call("GET", `/admin/v1/messages/${unknownUuid}`), 401, "invalid_api_key")
        expectError(
          yield* app.call("GET", `/admin/v1/messages/${unknownUuid}`, { token: apiKey }),
          401,
          "invalid_api_key"
        )
      })
    )
  })
})
