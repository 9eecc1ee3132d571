/**
 * The service's PostgreSQL client: @effect/sql-pg's pool and wire protocol, with two rules a
 * failover needs that the library's PgClient.make lacks (docs/failover.md):
 *
 * - A connection serves only once the server behind it has said it takes writes (not in
 *   recovery, not read-only), as libpq's `target_session_attrs=read-write` would (the driver
 *   takes one host, so there is no such option). Through a proxy that still points at a
 *   standby, every statement then fails as the outage it is (503, background work waits)
 *   instead of reading a standby's rows, which may lag what was acknowledged.
 * - A connection on which the server refused work because it cannot take writes (25006, a
 *   standby's "during recovery": SqlErrors.ts `isReadOnlyServer`) is retired from the pool
 *   (`PgPool.invalidate`) rather than returned to it, so that the next one is opened anew,
 *   through the proxy, to whichever server is primary by then. A server that shuts down (57P01)
 *   or dies closes its connections itself, and the pool retires those already.
 *
 * Otherwise it is PgClient.make statement for statement (the library does not export the part
 * that builds a client over a pool): the same compiler, transaction statements and transforms.
 */
import { PgClient, type PgConnection, PgPool } from "@effect/sql-pg"
import { Deferred, Effect, Layer, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient, type SqlConnection, SqlError, Statement } from "effect/sql"
import { isReadOnlyServer, readOnlyState } from "./SqlErrors.ts"

/** Asked of every new connection before it serves, and by `/ready`: can this server take a write? */
export const writabilityQuery =
  "SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only"

/** Why the server cannot take writes, from `pg_is_in_recovery()` and `transaction_read_only`; undefined when it can. */
export const whyReadOnly = (inRecovery: unknown, readOnly: unknown): string | undefined =>
  inRecovery === true ? "it is in recovery (a standby)" : readOnly === "on" ? "transaction_read_only is on" : undefined

/**
 * The failure of a connection refused because its server cannot take writes: a connection
 * failure (the database unavailable) carrying 25006, PostgreSQL's own state for it, and the reason.
 */
export const readOnlyRefusal = (why: string): SqlError.SqlError =>
  new SqlError.SqlError({
    reason: new SqlError.ConnectionError({
      cause: Object.assign(new Error(why), { code: readOnlyState }),
      message: `RetiringClient: the server cannot take writes: ${why}`,
      operation: "connect"
    })
  })

/** A statement interface over one session whose failures may retire it (PgClient's ConnectionImpl, guarded). */
class RetiringConnection implements SqlConnection.Connection {
  private readonly connection: PgConnection.PgConnection
  private readonly onError: (error: SqlError.SqlError) => Effect.Effect<void>

  constructor(connection: PgConnection.PgConnection, onError: (error: SqlError.SqlError) => Effect.Effect<void>) {
    this.connection = connection
    this.onError = onError
  }

  private run(sql: string, params: ReadonlyArray<unknown>, prepare = true) {
    return Effect.tapError(
      Effect.map(this.connection.query(sql, params, prepare), (result) => result.rows),
      this.onError
    )
  }

  execute(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) {
    return transformRows ? Effect.map(this.run(sql, params), transformRows) : this.run(sql, params)
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tapError(this.connection.query(sql, params), this.onError)
  }
  executeWithoutTransform(sql: string, params: ReadonlyArray<unknown>) {
    return this.run(sql, params)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tapError(this.connection.queryValues(sql, params), this.onError)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tapError(this.connection.queryValues(sql, params, false), this.onError)
  }
  executeUnprepared(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) {
    const operation = this.run(sql, params, false)
    return transformRows ? Effect.map(operation, transformRows) : operation
  }
  executeStream(
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) {
    const stream = Stream.tapError(this.connection.stream(sql, params), this.onError)
    return transformRows ? Stream.mapArray(stream, (rows) => transformRows(rows) as typeof rows) : stream
  }
}

/** PostgreSQL answers `ROLLBACK` to a COMMIT of an aborted transaction (as PgClient's own commit). */
const commit = (conn: SqlConnection.Connection): Effect.Effect<void, SqlError.SqlError> =>
  Effect.flatMap(conn.executeRaw("COMMIT", []), (result) =>
    (result as PgConnection.Result).command === "ROLLBACK"
      ? Effect.fail(
          new SqlError.SqlError({
            reason: new SqlError.UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "PgClient: COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
      : Effect.void
  )

/** A SqlClient over a pool of `options` whose connections serve only a writable server and retire when it stops being one. */
export const makeRetiringClient = Effect.fnUntraced(function* (options: PgClient.PgPoolConfig) {
  const pool = yield* PgPool.make(options)
  const retireOnReadOnly =
    (connection: PgConnection.PgConnection) =>
    (error: SqlError.SqlError): Effect.Effect<void> =>
      isReadOnlyServer(error) ? pool.invalidate(connection) : Effect.void

  // the sessions known to reach a writable server (pool items: the base connection, never a pinned view)
  const writable = new WeakSet<PgConnection.PgConnection>()
  // the check under way, or refused, per session: those that check it out meanwhile wait for the same answer
  const checks = new WeakMap<PgConnection.PgConnection, Deferred.Deferred<void, SqlError.SqlError>>()
  const wrappers = new WeakMap<PgConnection.PgConnection, RetiringConnection>()
  const wrap = (connection: PgConnection.PgConnection): RetiringConnection => {
    const known = wrappers.get(connection)
    if (known !== undefined) return known
    const wrapper = new RetiringConnection(connection, retireOnReadOnly(connection))
    wrappers.set(connection, wrapper)
    return wrapper
  }

  const check = (connection: PgConnection.PgConnection): Effect.Effect<void, SqlError.SqlError> =>
    Effect.suspend(() => {
      const pending = checks.get(connection)
      if (pending !== undefined) return Deferred.await(pending)
      const answer = Deferred.makeUnsafe<void, SqlError.SqlError>()
      checks.set(connection, answer)
      return connection.query(writabilityQuery, [], false).pipe(
        Effect.tapError(() => Effect.sync(() => checks.delete(connection))),
        Effect.flatMap(({ rows }) => {
          const why = whyReadOnly(rows[0]?.in_recovery, rows[0]?.read_only)
          if (why === undefined) {
            writable.add(connection)
            checks.delete(connection)
            return Effect.void
          }
          // refused for good: retired, and whoever still holds it is told the same
          return Effect.andThen(pool.invalidate(connection), Effect.fail(readOnlyRefusal(why)))
        }),
        Effect.onExit((exit) => Deferred.done(answer, exit)),
        Effect.uninterruptible
      )
    })
  const checked = (
    connection: PgConnection.PgConnection
  ): Effect.Effect<PgConnection.PgConnection, SqlError.SqlError> =>
    writable.has(connection) ? Effect.succeed(connection) : Effect.as(check(connection), connection)

  const compiler = PgClient.makeCompiler(options.transformQueryNames, options.transformJson)
  const transformRows = options.transformResultNames
    ? Statement.defaultTransforms(options.transformResultNames, options.transformJson).array
    : undefined

  return yield* SqlClient.make({
    acquirer: Effect.map(Effect.flatMap(pool.get, checked), wrap),
    borrower: (f) => pool.use((connection) => Effect.flatMap(checked(connection), (c) => f(wrap(c)))),
    // a transaction's session is checked, then pinned: its statements see the server it was checked on
    transactionAcquirer: Effect.flatMap(Effect.flatMap(pool.get, checked), (connection) =>
      Effect.map(connection.pin, (pinned) => new RetiringConnection(pinned, retireOnReadOnly(pinned)))
    ),
    compiler,
    driver: "pg",
    prepareTransactionControls: true,
    commit,
    releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
    spanAttributes: [
      ["db.system.name", "postgresql"],
      ["db.namespace", options.database ?? options.username ?? "postgres"],
      ["server.address", options.host ?? "localhost"],
      ["server.port", options.port ?? 5432]
    ],
    transformRows
  })
})

/** The SqlClient of `options` (makeRetiringClient) as a layer; the pool closes with it. */
export const retiringClientLayer = (
  options: PgClient.PgPoolConfig
): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effect(SqlClient.SqlClient, makeRetiringClient(options)).pipe(Layer.provide(Reactivity.layer))
