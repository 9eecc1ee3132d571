/** A `fetch` for the CLI backed by the in-process app of test/support/TestApp.ts (no port). */
import type { FetchFn } from "../../src/admin/cli/client.ts"
import type { TestApp } from "../support/TestApp.ts"

/** Routes `url`'s path and query to `app.call`, with the request's method, headers and body as sent. */
export const appFetch = (app: TestApp): FetchFn => async (url, init) => {
  const { pathname, search } = new URL(url)
  const headers: Record<string, string> = {}
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value
  })
  const body = init.body
  if (body !== undefined && body !== null && typeof body !== "string") throw new TypeError("appFetch sends string bodies only")
  const reply = await app.call(init.method ?? "GET", `${pathname}${search}`, {
    headers,
    ...(typeof body === "string" ? { raw: body } : {})
  })
  return new Response(reply.text === "" ? null : reply.text, { status: reply.status, headers: reply.headers })
}

/** A `fetch` that never connects, as when nothing listens at the URL. */
export const refusingFetch: FetchFn = async () => {
  throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) })
}
