/**
 * API keys at the level of the service (src/organisations/ApiKeys.ts), over the test file's own
 * database: what a key is made of, that every character of it counts, and its life (list, revoke),
 * with the short trust a process gives a key it has read.
 */
import { assert, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { createHash, randomUUID } from "node:crypto"
import { ApiKeys, keyTrustMs } from "../../src/organisations/ApiKeys.ts"
import { Organisations } from "../../src/organisations/Organisations.ts"
import { appServices } from "../support/AppServices.ts"
import { backend } from "../support/TestApp.ts"

const KeysTestLayer = appServices()

const keyShape = /^svc_sms_([a-z0-9]{20})\.([A-Za-z0-9_-]{43})$/
const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const keyIdAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

/** `s` with its character at `i` replaced by the next one of `alphabet` (so still well-formed). */
const alterAt = (s: string, i: number, alphabet: string) =>
  `${s.slice(0, i)}${alphabet[(alphabet.indexOf(s[i]!) + 1) % alphabet.length]}${s.slice(i + 1)}`

const newOrganisation = Effect.gen(function* () {
  return (yield* (yield* Organisations).create("Keys test org", "KEYS")).id
})

/** Runs a test body on its own TestClock, starting at 2026-01-10T12:00:00Z. */
const onTestClock = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  TestClock.setTime(Date.UTC(2026, 0, 10, 12)).pipe(Effect.andThen(body), Effect.provide(TestClock.layer()))

const authenticates = (token: string) =>
  Effect.gen(function* () {
    return Option.isSome(yield* (yield* ApiKeys).authenticate(token))
  })

layer(KeysTestLayer, { excludeTestServices: true })(`API keys (${backend})`, (it) => {
  it.effect("a key authenticates as its organisation, key id and permissions (duplicates dropped)", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const org = yield* newOrganisation
      const issued = yield* keys.issue(org, ["sms.send", "balance.read", "sms.send"])
      const match = keyShape.exec(issued.apiKey)
      assert.isNotNull(match, issued.apiKey)
      expect(match![1]).toBe(issued.keyId)
      expect(issued.permissions).toEqual(["sms.send", "balance.read"])
      expect(yield* keys.authenticate(issued.apiKey)).toEqual(
        Option.some({ organisationId: org, keyId: issued.keyId, permissions: ["sms.send", "balance.read"] })
      )
    })
  )

  it.effect("every character of the secret counts: changing any one of the 43 refuses the key", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const issued = yield* keys.issue(yield* newOrganisation, ["balance.read"])
      const [prefix, secret] = issued.apiKey.split(".") as [string, string]
      expect(secret).toHaveLength(43)
      const accepted: Array<number> = []
      for (let i = 0; i < secret.length; i++) {
        if (yield* authenticates(`${prefix}.${alterAt(secret, i, secretAlphabet)}`)) accepted.push(i)
      }
      expect(accepted, "positions whose change still authenticates").toEqual([])
      // control: the key itself still works
      assert.isTrue(yield* authenticates(issued.apiKey))
    })
  )

  it.effect("every character of the key id counts, and another key's secret does not open this key", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const org = yield* newOrganisation
      const [a, b] = [yield* keys.issue(org, ["balance.read"]), yield* keys.issue(org, ["balance.read"])]
      const [, keyId, secret] = keyShape.exec(a.apiKey) as unknown as [string, string, string]
      for (let i = 0; i < keyId.length; i++) {
        assert.isFalse(
          yield* authenticates(`svc_sms_${alterAt(keyId, i, keyIdAlphabet)}.${secret}`),
          `key id position ${i}`
        )
      }
      assert.isFalse(yield* authenticates(`svc_sms_${a.keyId}.${b.apiKey.split(".")[1]}`))
      assert.isFalse(yield* authenticates(`svc_sms_${"0".repeat(20)}.${secret}`))
    })
  )

  it.effect("key ids are drawn from letters and digits, and are distinct", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const org = yield* newOrganisation
      const ids: Array<string> = []
      for (let i = 0; i < 8; i++) ids.push((yield* keys.issue(org, ["balance.read"])).keyId)
      expect(new Set(ids).size).toBe(ids.length)
      // 160 random characters of which none is a letter would be a broken generator
      expect(ids.join("")).toMatch(/[a-z]/)
    })
  )

  it.effect("a token that is not exactly a key is refused, even around a live key", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const issued = yield* keys.issue(yield* newOrganisation, ["balance.read"])
      for (const token of [
        "",
        "Bearer x",
        `x${issued.apiKey}`,
        `${issued.apiKey}x`,
        ` ${issued.apiKey}`,
        issued.apiKey.replace(".", "-")
      ]) {
        expect(Option.isNone(yield* keys.authenticate(token)), JSON.stringify(token)).toBe(true)
      }
    })
  )

  it.effect("only the secret's SHA-256 is stored, never the secret", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const sql = yield* SqlClient.SqlClient
      const issued = yield* keys.issue(yield* newOrganisation, ["balance.read"])
      const secret = issued.apiKey.split(".")[1]!
      const rows = yield* sql<{
        secretSha256: Uint8Array
        row: string
      }>`SELECT secret_sha256, row_to_json(k)::text AS row
        FROM api_keys k WHERE key_id = ${issued.keyId}`
      expect(rows).toHaveLength(1)
      expect(Buffer.from(rows[0]!.secretSha256).equals(createHash("sha256").update(secret, "utf8").digest())).toBe(true)
      expect(rows[0]!.row).not.toContain(secret)
    })
  )

  it.effect("a revoked key is refused; revoking again keeps the first revocation time", () =>
    onTestClock(
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const org = yield* newOrganisation
        const issued = yield* keys.issue(org, ["balance.read"])
        const other = yield* keys.issue(org, ["sms.send"])
        yield* keys.revoke(issued.keyId)
        assert.isFalse(yield* authenticates(issued.apiKey))
        assert.isTrue(yield* authenticates(other.apiKey))
        const revokedAt = Effect.map(keys.list(org), (ks) => ks.find((k) => k.keyId === issued.keyId)?.revokedAt)
        const first = yield* revokedAt
        yield* TestClock.adjust("1 minute")
        yield* keys.revoke(issued.keyId)
        const again = yield* revokedAt
        expect(first).toEqual(new Date(Date.UTC(2026, 0, 10, 12)))
        expect(again).toEqual(first)
      })
    )
  )

  it.effect("a key trusted a moment ago is refused as soon as this process revokes it", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const issued = yield* keys.issue(yield* newOrganisation, ["sms.send"])
      assert.isTrue(yield* authenticates(issued.apiKey))
      yield* keys.revoke(issued.keyId)
      assert.isFalse(yield* authenticates(issued.apiKey))
    })
  )

  it.effect("a revocation written by another process is seen once the key's trust has run out", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const sql = yield* SqlClient.SqlClient
      const issued = yield* keys.issue(yield* newOrganisation, ["sms.send"])
      assert.isTrue(yield* authenticates(issued.apiKey))
      // another process revokes it: this one trusts what it read for keyTrustMs, then reads again
      yield* sql`UPDATE api_keys SET revoked_at = now() WHERE key_id = ${issued.keyId}`
      assert.isTrue(yield* authenticates(issued.apiKey))
      yield* Effect.sleep(keyTrustMs + 100)
      assert.isFalse(yield* authenticates(issued.apiKey))
    })
  )

  it.effect("lists an organisation's keys oldest first, revoked included, never a secret", () =>
    onTestClock(
      Effect.gen(function* () {
        const keys = yield* ApiKeys
        const org = yield* newOrganisation
        expect(yield* keys.list(org)).toEqual([])
        // b is issued later but, most likely, with a key id that sorts first
        const b = yield* keys.issue(org, ["balance.read", "delivery.read"])
        yield* TestClock.adjust("-1 minute")
        const a = yield* keys.issue(org, ["sms.send"])
        yield* keys.revoke(a.keyId)
        const listed = yield* keys.list(org)
        expect(
          listed.map((k) => ({ keyId: k.keyId, permissions: k.permissions, revoked: k.revokedAt !== null }))
        ).toEqual([
          { keyId: a.keyId, permissions: ["sms.send"], revoked: true },
          { keyId: b.keyId, permissions: ["balance.read", "delivery.read"], revoked: false }
        ])
        for (const k of listed)
          expect(Object.keys(k).sort()).toEqual(["createdAt", "keyId", "permissions", "revokedAt"])
        expect(listed.map((k) => k.createdAt.getTime() - Date.UTC(2026, 0, 10, 12))).toEqual([-60_000, 0])
      })
    )
  )

  it.effect("NotFound for an unknown organisation (malformed or absent) and an unknown key", () =>
    Effect.gen(function* () {
      const keys = yield* ApiKeys
      const tagOf = <A, E extends { readonly _tag: string }>(e: Effect.Effect<A, E>) =>
        e.pipe(
          Effect.flip,
          Effect.map((x) => x._tag)
        )
      const absent = randomUUID()
      const messageOf = <A, E extends object>(e: Effect.Effect<A, E>) =>
        e.pipe(
          Effect.flip,
          Effect.map((x) => ("error" in x ? (x.error as { readonly message: string }).message : String(x)))
        )
      expect(yield* tagOf(keys.issue("not-a-uuid", ["sms.send"]))).toBe("NotFound")
      expect(yield* tagOf(keys.issue(absent, ["sms.send"]))).toBe("NotFound")
      expect(yield* tagOf(keys.list("not-a-uuid"))).toBe("NotFound")
      expect(yield* tagOf(keys.list(absent))).toBe("NotFound")
      expect(yield* tagOf(keys.revoke("0".repeat(20)))).toBe("NotFound")
      expect(yield* messageOf(keys.issue("not-a-uuid", ["sms.send"]))).toBe("No organisation not-a-uuid")
      expect(yield* messageOf(keys.issue(absent, ["sms.send"]))).toBe(`No organisation ${absent}`)
      expect(yield* messageOf(keys.list("not-a-uuid"))).toBe("No organisation not-a-uuid")
      expect(yield* messageOf(keys.list(absent))).toBe(`No organisation ${absent}`)
      expect(yield* messageOf(keys.revoke("0".repeat(20)))).toBe(`No API key ${"0".repeat(20)}`)
    })
  )
})
