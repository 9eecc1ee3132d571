// The edge's answer when the database cannot be reached: 503 service_unavailable with Retry-After,
// and 500 internal_error revealing nothing for any other failure.
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { SqlError } from "effect/sql"
import { describe, expect, it } from "vitest"
import { makeEdge, retryAfterSeconds } from "../../src/http/Edge.ts"

const failing = (reason: SqlError.SqlErrorReason) =>
  HttpRouter.add("GET", "/boom", Effect.die(new SqlError.SqlError({ reason })).pipe(Effect.as(HttpServerResponse.empty())))

const call = async (reason: SqlError.SqlErrorReason) => {
  const app = Layer.mergeAll(failing(reason), makeEdge(() => [])).pipe(Layer.provide(HttpServer.layerServices))
  const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })
  try {
    const res = await handler(new Request("http://test/boom"))
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() }
  } finally {
    await dispose()
  }
}

describe("database unavailable at the edge", () => {
  it("answers 503 service_unavailable with Retry-After when the connection fails", async () => {
    const res = await call(new SqlError.ConnectionError({ message: "connect ECONNREFUSED 127.0.0.1:5432", cause: undefined }))
    expect(res.status).toBe(503)
    expect(res.retryAfter).toBe(String(retryAfterSeconds))
    expect(JSON.parse(res.body)).toEqual({
      error: { code: "service_unavailable", message: expect.any(String) }
    })
    expect(res.body).not.toContain("ECONNREFUSED")
  })

  it("answers 500 internal_error without SQL or stack for other database failures", async () => {
    const res = await call(new SqlError.SqlSyntaxError({ message: "syntax error at or near SELEC", cause: undefined }))
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body)).toEqual({ error: { code: "internal_error", message: "Internal server error" } })
    expect(res.body).not.toMatch(/SELEC|syntax|at /)
  })
})
