/**
 * The simulator console: a page at `/console` and its assets under `/console/…`, all static.
 * The page asks for the operator token and calls /admin/v1 with it; the service only serves files.
 *
 * Only the files listed here are served, each on a route of its own (no path is ever mapped to
 * the file system, so no traversal is possible), read once at start-up. Preact and htm come from
 * node_modules as published ES modules (no CDN, no build step); the page's import map names them.
 * Every answer carries a strict Content-Security-Policy: scripts only from this origin plus the
 * import map by its hash, no inline script or style, no frame, API calls to this origin only.
 * Files are revalidated on each load (ETag, 304) so an upgrade is never mixed with stale modules.
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

const javascript = "text/javascript; charset=utf-8"

interface Asset {
  readonly path: `/console/${string}`
  readonly contentType: string
  /** Where the file is read from. */
  readonly file: string
}

const own = (name: string, contentType: string): Asset => ({
  path: `/console/${name}`,
  contentType,
  file: join(import.meta.dirname, "assets", name)
})

/** A library module as its package publishes it, resolved like an `import` of `specifier`. */
const vendor = (name: string, specifier: string): Asset & { readonly specifier: string } => ({
  path: `/console/vendor/${name}`,
  contentType: javascript,
  file: fileURLToPath(import.meta.resolve(specifier)),
  specifier
})

const libraries = [vendor("preact.mjs", "preact"), vendor("preact-hooks.mjs", "preact/hooks"), vendor("htm.mjs", "htm")]

/** The allow-list: every file the console serves besides its page. */
const assets: ReadonlyArray<Asset> = [
  own("app.js", javascript),
  own("api.js", javascript),
  own("poll.js", javascript),
  own("html.js", javascript),
  own("views.js", javascript),
  own("inbound-view.js", javascript),
  own("inbound-tables.js", javascript),
  own("console.css", "text/css; charset=utf-8"),
  own("icon.svg", "image/svg+xml"),
  ...libraries
]

// the bare specifiers the console's modules (and preact/hooks itself) import
const importMap = JSON.stringify({ imports: Object.fromEntries(libraries.map((l) => [l.specifier, l.path])) })
const sha256 = (text: string | Uint8Array) => createHash("sha256").update(text).digest()

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SMS simulator console</title>
<link rel="icon" href="/console/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/console.css">
<script type="importmap">${importMap}</script>
${libraries.map((l) => `<link rel="modulepreload" href="${l.path}">`).join("\n")}
<script type="module" src="/console/app.js"></script>
</head>
<body>
<div id="console"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`

/** The Content-Security-Policy of every console answer. */
const consoleCsp = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${sha256(importMap).toString("base64")}'`,
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

// X-Content-Type-Options comes with every answer of the service (http/Edge.ts)
const securityHeaders = {
  "content-security-policy": consoleCsp,
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-cache"
}

/** The console's page (the router answers `/console/` too). */
export const consolePagePath = "/console"
const pagePath = consolePagePath

/** Every (method, path) the console answers, for the edge's tables. */
export const consolePaths: ReadonlyArray<readonly [string, string]> = [
  ["GET", pagePath],
  ...assets.map((a) => ["GET", a.path] as const)
]

/** A file's answer: 200 with its body, or 304 when the client's copy is current. */
const serve = (body: Uint8Array, contentType: string) => {
  const etag = `"${sha256(body).toString("base64url").slice(0, 22)}"`
  const headers = { ...securityHeaders, etag }
  return Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    request.headers["if-none-match"] === etag
      ? HttpServerResponse.empty({ status: 304, headers })
      : HttpServerResponse.uint8Array(body, { contentType, headers })
  )
}

/**
 * The console's routes; fails to build when a listed file cannot be read (a broken install).
 * The files are read synchronously: the routes are then served in the same turn as the rest, so
 * no request meets a half-started service after the start-up banner.
 */
export const ConsoleRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const files = yield* Effect.forEach(assets, (asset) =>
      Effect.try({
        try: () => readFileSync(asset.file),
        catch: (cause) => new Error(`the console cannot read ${asset.file}`, { cause })
      }).pipe(Effect.map((body) => HttpRouter.route("GET", asset.path, serve(body, asset.contentType))))
    )
    const html = new TextEncoder().encode(page)
    return HttpRouter.addAll([HttpRouter.route("GET", pagePath, serve(html, "text/html; charset=utf-8")), ...files])
  })
)
