// A database that cannot be reached answers 503 service_unavailable with Retry-After, whatever
// form the failure takes; any other failure is a 500 internal_error that reveals nothing, logged
// with the correlation id its response carries in X-Request-Id.
import { Effect, Layer, Logger, type Option } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { SqlError } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { serviceLayer } from "../../src/app/AppLayer.ts"
import { httpAppLayer } from "../../src/app/HttpApp.ts"
import { clockLayer } from "../../src/clock/ServiceClock.ts"
import { databaseLayer } from "../../src/db/Database.ts"
import { readOnlyRefusal } from "../../src/db/RetiringClient.ts"
import { isConnectionFailure, isReadOnlyServer, isTransient, sqlStateOf } from "../../src/db/SqlErrors.ts"
import { fromDatabase } from "../../src/db/Statements.ts"
import { maskPhone } from "../../src/domain/Phone.ts"
import { retryAfterSeconds } from "../../src/http/Edge.ts"
import { AccessLogWriter } from "../../src/observability/Logging.ts"
import { ApiKeys } from "../../src/organisations/ApiKeys.ts"
import { providerLayer } from "../../src/provider/ProviderLayer.ts"
import { makeCaller, testConfig } from "../support/TestApp.ts"

/** A server error as @effect/sql-pg reports it: the reason carries the server's fields on its cause. */
const serverError = (
  code: string,
  Reason: new (props: {
    cause: unknown
    message: string
    operation: string
  }) => SqlError.SqlErrorReason = SqlError.UnknownError,
  said = `server said ${code}`
) =>
  new SqlError.SqlError({
    reason: new Reason({
      cause: Object.assign(new Error(said), { code, severity: "FATAL" }),
      message: "PgConnection: Query failed",
      operation: "query"
    })
  })

const connection = (message: string, cause: unknown) =>
  new SqlError.SqlError({ reason: new SqlError.ConnectionError({ cause, message, operation: "connect" }) })

const unavailable: ReadonlyArray<readonly [string, unknown]> = [
  ["08006 connection_failure", serverError("08006")],
  ["08001 sqlclient_unable_to_establish_sqlconnection", serverError("08001")],
  ["08P01 protocol_violation (class 08)", serverError("08P01")],
  ["57P01 admin_shutdown", serverError("57P01")],
  ["57P02 crash_shutdown", serverError("57P02")],
  ["57P03 cannot_connect_now (starting up / shutting down)", serverError("57P03")],
  ["53300 too_many_connections", serverError("53300")],
  // a failover: the proxy reaches a standby, or a primary turned read-only
  [
    "25006 read_only_sql_transaction (a write on a standby)",
    serverError("25006", SqlError.UnknownError, "cannot execute UPDATE in a read-only transaction")
  ],
  [
    "55000 on a standby: a lock while recovery is in progress",
    serverError(
      "55000",
      SqlError.UnknownError,
      "cannot acquire lock mode ExclusiveLock on database objects while recovery is in progress"
    )
  ],
  [
    "XX000 on a standby: a transaction id during recovery",
    serverError("XX000", SqlError.UnknownError, "cannot assign TransactionIds during recovery")
  ],
  ["a connection refused because its server is a standby", readOnlyRefusal("it is in recovery (a standby)")],
  ["a connect timeout", connection("PgConnection: Connection timed out", new Error("Connection timed out"))],
  [
    "a refused socket",
    connection(
      "PgConnection: Failed to connect",
      Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })
    )
  ],
  ["a closed connection", connection("PgConnection: Connection is closed", new Error("Connection is closed"))],
  ["a socket reset under a query", serverError("ECONNRESET")],
  [
    "a failed authentication",
    new SqlError.SqlError({ reason: new SqlError.AuthenticationError({ cause: new Error("28P01") }) })
  ],
  ["a connection failure wrapped in another error", new Error("wrapped", { cause: serverError("57P03") })]
]

const notUnavailable: ReadonlyArray<readonly [string, unknown]> = [
  ["42601 syntax_error", serverError("42601", SqlError.SqlSyntaxError)],
  ["23505 unique_violation", serverError("23505")],
  ["22021 character_not_in_repertoire", serverError("22021")],
  ["57014 query_canceled", serverError("57014", SqlError.StatementTimeoutError)],
  ["53100 disk_full", serverError("53100")],
  [
    "55000 object_not_in_prerequisite_state, not about recovery",
    serverError("55000", SqlError.UnknownError, "sequence is not yet defined in this session")
  ],
  ["XX000 internal_error", serverError("XX000")],
  ["a plain Error", new Error("boom")],
  ["a string", "boom"],
  [
    "a cyclic cause chain",
    (() => {
      const e = new Error("loop") as Error & { cause?: unknown }
      e.cause = e
      return e
    })()
  ]
]

describe("isConnectionFailure: the one classification of an unreachable database", () => {
  it.each(unavailable)("%s: unavailable", (_name, failure) => {
    expect(isConnectionFailure(failure)).toBe(true)
  })
  it.each(notUnavailable)("%s: not unavailable", (_name, failure) => {
    expect(isConnectionFailure(failure)).toBe(false)
  })
  it("a server that cannot take writes is told apart from the rest of the unavailable (its connection is retired)", () => {
    expect(isReadOnlyServer(serverError("25006"))).toBe(true)
    expect(isReadOnlyServer(serverError("55000", SqlError.UnknownError, "recovery is in progress"))).toBe(true)
    expect(isReadOnlyServer(readOnlyRefusal("transaction_read_only is on"))).toBe(true)
    for (const code of ["57P01", "08006", "55000", "40001"])
      expect(isReadOnlyServer(serverError(code)), code).toBe(false)
  })

  it("a deadlock or a serialization failure is transient (worth running again), not unavailable", () => {
    for (const [code, Reason] of [
      ["40P01", SqlError.DeadlockError],
      ["40001", SqlError.SerializationError]
    ] as const) {
      const error = serverError(code, Reason)
      expect(sqlStateOf(error)).toBe(code)
      expect(isConnectionFailure(error)).toBe(false)
      expect(isTransient(error)).toBe(true)
    }
    expect(isTransient(serverError("57P03"))).toBe(true)
    expect(isTransient(serverError("42601", SqlError.SqlSyntaxError))).toBe(false)
  })
})

// The whole application with an ApiKeys service whose lookups fail as `failure` says, through the
// stores' boundary (fromDatabase): every authenticated request then meets that failure in a
// service call, as a handler would.
let failure: SqlError.SqlError = serverError("57P03")
const FailingApiKeys = Layer.succeed(
  ApiKeys,
  ApiKeys.of({
    issue: () => Effect.die("not used"),
    revoke: () => Effect.die("not used"),
    list: () => Effect.die("not used"),
    authenticate: () =>
      fromDatabase(Effect.suspend(() => Effect.fail(failure)) as Effect.Effect<Option.Option<never>, SqlError.SqlError>)
  })
)
const logged: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []
const accessLines: Array<string> = []
const config = testConfig()
const app = httpAppLayer.pipe(
  Layer.provide(FailingApiKeys),
  Layer.provideMerge(
    serviceLayer({ config, database: databaseLayer, provider: providerLayer, clock: clockLayer("system") })
  ),
  Layer.provide(HttpServer.layerServices),
  Layer.provide(Layer.succeed(AccessLogWriter, (line: string) => void accessLines.push(line))),
  // merged into the app's output: toWebHandler runs requests with it, so their logs are captured
  Layer.provideMerge(Logger.layer([Logger.map(Logger.formatStructured, (entry) => void logged.push(entry))]))
)
const { handler, dispose } = HttpRouter.toWebHandler(app, { disableLogger: true })
const call = makeCaller((request) => handler(request))
afterAll(() => dispose())
const balance = (headers: Record<string, string> = {}) =>
  call("GET", "/api/sms/v2/balance/", { token: "svc_sms_abc.def", headers })

describe("a failing database behind a handler", () => {
  it.each(unavailable.filter(([, f]) => SqlError.isSqlError(f)))(
    "%s: 503 service_unavailable with Retry-After",
    async (_name, f) => {
      failure = f as SqlError.SqlError
      const res = await balance()
      expect(res.status, res.text).toBe(503)
      expect(res.headers.get("retry-after")).toBe(String(retryAfterSeconds))
      expect(res.body).toEqual({ error: { code: "service_unavailable", message: expect.any(String) } })
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
      expect(res.text).not.toMatch(/PgConnection|server said|ECONN/)
    }
  )

  it("any other failure: 500 internal_error revealing nothing, logged at error level with the id the response carries", async () => {
    failure = serverError("42601", SqlError.SqlSyntaxError)
    logged.length = 0
    accessLines.length = 0
    const res = await balance({ "x-request-id": "client-chosen-id-42" })
    expect(res.status).toBe(500)
    expect(res.body).toEqual({ error: { code: "internal_error", message: "Internal server error" } })
    expect(res.text).not.toMatch(/42601|server said|syntax|at /)
    expect(res.headers.get("x-request-id")).toBe("client-chosen-id-42")
    const errors = logged.filter((l) => l.level === "ERROR")
    expect(errors).toHaveLength(1)
    expect(errors[0]!.annotations).toMatchObject({
      request_id: "client-chosen-id-42",
      method: "GET",
      path: "/api/sms/v2/balance/"
    })
    expect(accessLines).toHaveLength(1)
    expect(JSON.parse(accessLines[0]!)).toMatchObject({
      message: "http",
      level: "INFO",
      annotations: {
        method: "GET",
        path: "/api/sms/v2/balance/",
        status: 500,
        request_id: "client-chosen-id-42",
        ms: expect.any(Number)
      }
    })
  })

  it.each([
    ["empty", ""],
    ["65 characters", "x".repeat(65)],
    ["with a space", "my id"],
    ["non-ASCII", "idé"]
  ])("a client X-Request-Id that is %s is replaced by a generated one", async (_name, id) => {
    failure = serverError("57P03")
    const res = await balance({ "x-request-id": id })
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("every response carries an X-Request-Id, unique per request: success, 404, health, docs", async () => {
    const ids = new Set<string>()
    for (const path of ["/health", "/nothing", "/api/sms/v2/openapi.json"]) {
      const res = await call("GET", path)
      const id = res.headers.get("x-request-id")
      expect(id, path).toMatch(/^[0-9a-f-]{36}$/)
      ids.add(id!)
    }
    expect(ids.size).toBe(3)
    const docs = await call("GET", "/api/sms/v2/docs", { headers: { accept: "text/html" } })
    expect(docs.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("the access log line drops the query string and masks phone numbers in the path", async () => {
    accessLines.length = 0
    await call("GET", "/api/sms/v2/messages/+261340000001/?cursor=secret-cursor")
    expect(accessLines).toHaveLength(1)
    expect(accessLines[0]).toContain(`"path":"/api/sms/v2/messages/${maskPhone("+261340000001")}/"`)
    expect(accessLines[0]).not.toContain("+261340000001")
    expect(accessLines[0]).not.toMatch(/secret-cursor|\?/)
    expect(accessLines[0]!.endsWith("\n")).toBe(true)
  })
})
