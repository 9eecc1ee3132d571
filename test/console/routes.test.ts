/**
 * What the service serves for the console, without a browser: the page and each listed file
 * with its content type, a strict Content-Security-Policy whose one hash is the page's import
 * map, revalidation by ETag, and nothing else under /console (no file outside the list, no
 * traversal, GET only).
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { consolePaths } from "../../src/console/ConsoleRoutes.ts"
import { expectError } from "../http/helpers.ts"
import { adminToken, App, withApp } from "../support/TestApp.ts"

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

const expectStrictHeaders = (headers: Headers) => {
  const csp = headers.get("content-security-policy") ?? ""
  expect(csp).toMatch(/^default-src 'none'; script-src 'self' 'sha256-[A-Za-z0-9+/]{43}='; style-src 'self';/)
  expect(csp).toContain("frame-ancestors 'none'")
  expect(csp).not.toMatch(/unsafe-|\*|https?:/)
  expect(headers.get("x-content-type-options")).toBe("nosniff")
  expect(headers.get("referrer-policy")).toBe("no-referrer")
  expect(headers.get("cache-control")).toBe("no-cache")
  expect(headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{22}"$/)
}

withApp()((it) => {
  describe("GET /console", () => {
    it.effect("answers the page as text/html, even to an Accept that names only HTML, with no secret in it", () =>
      Effect.gen(function* () {
        const app = yield* App
        for (const accept of [browserAccept, "text/html"]) {
          const res = yield* app.call("GET", "/console", { headers: { accept } })
          expect(res.status, res.text).toBe(200)
          expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
          expectStrictHeaders(res.headers)
          expect(res.text).toContain('<script type="module" src="/console/app.js"></script>')
          expect(res.text).not.toContain(adminToken)
        }
        expect((yield* app.call("GET", "/console/", { headers: { accept: browserAccept } })).status).toBe(200)
      })
    )

    it.effect("has no inline script but the import map, which the policy allows by its hash alone", () =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", "/console")
        const scripts = [...res.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
        const inline = scripts.filter(([, , body]) => body!.trim() !== "")
        expect(inline.map(([, attributes]) => attributes!.trim())).toEqual(['type="importmap"'])
        const importMap = inline[0]![2]!
        const hash = createHash("sha256").update(importMap).digest("base64")
        expect(res.headers.get("content-security-policy")).toContain(`script-src 'self' 'sha256-${hash}'`)
        const imports: Record<string, string> = JSON.parse(importMap).imports
        expect(Object.keys(imports).sort()).toEqual(["htm", "preact", "preact/hooks"])
        for (const path of Object.values(imports)) expect(consolePaths).toContainEqual(["GET", path])
        // nothing is fetched from another origin
        expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//)
      })
    )
  })

  describe("the console's files", () => {
    const files = consolePaths.map(([, path]) => path).filter((path) => path !== "/console")

    it.effect.each(files)("%s: served with its content type and the same headers", (path) =>
      Effect.gen(function* () {
        const app = yield* App
        const res = yield* app.call("GET", path, { headers: { accept: "*/*" } })
        expect(res.status, res.text).toBe(200)
        const type = path.endsWith(".css")
          ? "text/css; charset=utf-8"
          : path.endsWith(".svg")
            ? "image/svg+xml"
            : "text/javascript; charset=utf-8"
        expect(res.headers.get("content-type")).toBe(type)
        expectStrictHeaders(res.headers)
        expect(res.text.length).toBeGreaterThan(0)
      })
    )

    it.effect("serves the libraries exactly as their packages publish them", () =>
      Effect.gen(function* () {
        const app = yield* App
        const preact = yield* app.call("GET", "/console/vendor/preact.mjs")
        expect(preact.text).toBe(readFileSync(new URL(import.meta.resolve("preact")), "utf8"))
        const hooks = yield* app.call("GET", "/console/vendor/preact-hooks.mjs")
        expect(hooks.text).toBe(readFileSync(new URL(import.meta.resolve("preact/hooks")), "utf8"))
      })
    )

    it.effect("answers 304 to a copy that is current, 200 to one that is not", () =>
      Effect.gen(function* () {
        const app = yield* App
        const first = yield* app.call("GET", "/console/app.js")
        const etag = first.headers.get("etag")!
        const again = yield* app.call("GET", "/console/app.js", { headers: { "if-none-match": etag } })
        expect(again.status).toBe(304)
        expect(again.text).toBe("")
        expect(again.headers.get("etag")).toBe(etag)
        expect((yield* app.call("GET", "/console/app.js", { headers: { "if-none-match": '"stale"' } })).status).toBe(
          200
        )
      })
    )

    it.effect(
      "serves nothing that is not listed: other files, traversals, encoded slashes are 404; other methods 405",
      () =>
        Effect.gen(function* () {
          const app = yield* App
          for (const path of [
            "/console/missing.js",
            "/console/assets/app.js",
            "/console/vendor/preact.mjs.map",
            "/console/ConsoleRoutes.ts",
            "/console/%2e%2e/%2e%2e/package.json",
            "/console/vendor/..%2f..%2fpackage.json",
            "/console/vendor/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json"
          ]) {
            expectError(yield* app.call("GET", path), 404, "not_found")
          }
          expectError(yield* app.call("POST", "/console"), 405, "method_not_allowed")
          expectError(yield* app.call("DELETE", "/console/app.js"), 405, "method_not_allowed")
        })
    )
  })
})
