/**
 * The fleet's binds to each SMSC (docs/decisions.md#fair-share-and-fleet-limits): an entry allows `binds` binds at once to
 * every service process on one database together. Each one is a slot, a row of `smpp_bind_slots`
 * (owned here) leased to one process until `lease_until` and renewed by it while it lives; a
 * process binds only while it holds a slot, and a slot whose lease ran out (its holder died or
 * lost the database) is taken by another process.
 *
 * Leases are judged by the database's clock (`clock_timestamp()`), the one clock every process
 * shares, so that no two processes' clocks need agree. The holder judges its own lease by real
 * elapsed time since it asked for the renewal that the database confirmed: it drops its bind
 * `slotSafetyMs` before the lease can have run out, so the next holder binds only after it.
 *
 * Only on PostgreSQL (ProviderLayer.ts): the embedded PGlite serves one process, which holds
 * every bind (`openGate`).
 */
import { Context, Effect, Layer, Schedule, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import type { DatabaseUnavailable } from "../../db/DatabaseUnavailable.ts"
import { fromDatabase } from "../../db/Statements.ts"
import { makeOutageLog } from "../../observability/RecurringLogs.ts"
import { Ids } from "../../platform/Ids.ts"

/** How long a slot's lease lasts without renewal (database time). */
export const slotLeaseTtlMs = 10_000
/** How often a holder renews its lease, and a process without a slot looks for a free one. */
export const slotRenewMs = 2_000
/**
 * How long before its lease can have run out a holder drops its bind when no renewal was
 * confirmed (8 s without one, a loaded pool included). With the TTL and the renewal interval, a
 * dead holder's slot is taken within `slotLeaseTtlMs + slotRenewMs` (12 s), and its bind
 * replaced within 15 s.
 */
export const slotSafetyMs = 2_000

export class BindSlotStore extends Context.Service<
  BindSlotStore,
  {
    /** This process's id as a holder of slots. */
    readonly holder: string
    /**
     * Renews this process's slot of `route` (one of slots 0 to `binds - 1`), else takes a free
     * one; the slot it holds for the next `slotLeaseTtlMs`, or undefined when every slot is held.
     */
    readonly hold: (route: string, binds: number) => Effect.Effect<number | undefined, DatabaseUnavailable>
    /** Gives up this process's slot of `route` (after its unbind), so that another may bind at once. */
    readonly release: (route: string) => Effect.Effect<void, DatabaseUnavailable>
  }
>()("sms/BindSlotStore") {
  static readonly layer = Layer.effect(
    BindSlotStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const holder = yield* (yield* Ids).uuid
      const until = sql`clock_timestamp() + make_interval(secs => ${slotLeaseTtlMs / 1000})`

      const renew = (route: string, binds: number) =>
        sql<{ slot: number }>`UPDATE smpp_bind_slots SET lease_until = ${until}
        WHERE route = ${route} AND slot < ${binds} AND holder = ${holder} RETURNING slot`

      const take = (route: string, binds: number) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO smpp_bind_slots (route, slot, lease_until)
          SELECT ${route}, s, '-infinity'::timestamptz FROM generate_series(0, ${binds - 1}::integer) AS s
          ON CONFLICT DO NOTHING`
          return yield* sql<{ slot: number }>`WITH free AS (
            SELECT route, slot FROM smpp_bind_slots
            WHERE route = ${route} AND slot < ${binds} AND lease_until < clock_timestamp()
            ORDER BY slot LIMIT 1
            FOR UPDATE SKIP LOCKED)
          UPDATE smpp_bind_slots AS b SET holder = ${holder}, holder_pid = ${process.pid}, lease_until = ${until}
          FROM free WHERE b.route = free.route AND b.slot = free.slot
          RETURNING b.slot`
        })

      return BindSlotStore.of({
        holder,
        hold: (route, binds) =>
          fromDatabase(
            Effect.gen(function* () {
              const [mine] = yield* renew(route, binds)
              if (mine !== undefined) return mine.slot
              const [taken] = yield* take(route, binds)
              return taken?.slot
            })
          ),
        release: (route) =>
          fromDatabase(
            sql`UPDATE smpp_bind_slots SET holder = NULL, holder_pid = NULL, lease_until = '-infinity'
          WHERE route = ${route} AND holder = ${holder}`.pipe(Effect.asVoid)
          )
      })
    })
  ).pipe(Layer.provide(Ids.layer))
}

/** Whether this process may bind to one route now, kept by a loop renewing its slot's lease. */
export interface BindGate {
  /** How many binds the fleet may hold to the route. */
  readonly slots: number
  /** The slot this process holds (from 0), while its lease is safely alive; else undefined. */
  readonly slot: () => number | undefined
  /** Waits until this process holds a slot (at once when it does). */
  readonly awaitHeld: Effect.Effect<void>
  /** Takes or renews the slot once now (the provider does it before it serves, so that it knows). */
  readonly attempt: Effect.Effect<void>
  /** Keeps the slot: renews or takes one every `slotRenewMs` (the first `slotRenewMs` from now), until the gate closes. */
  readonly run: Effect.Effect<void>
  /** Stops renewing and gives the slot up; call once the route has unbound. */
  readonly close: Effect.Effect<void>
}

/** A gate that is always open: a route of a provider without bind slots (one process, tests). */
export const openGate = (slots: number): BindGate => ({
  slots,
  slot: () => 0,
  awaitHeld: Effect.void,
  attempt: Effect.void,
  run: Effect.void,
  close: Effect.void
})

const realMs = (): number => performance.now()
/** How often a route waiting for a slot looks whether it holds one. */
const heldPollMs = 100

/** The gate of route `route` allowing the fleet `binds` binds, over `store`. */
export const makeBindGate = (store: typeof BindSlotStore.Service, route: string, binds: number): BindGate => {
  let held: { readonly slot: number; readonly safeUntilMs: number } | undefined
  let closed = false
  const oneAtATime = Semaphore.makeUnsafe(1)
  const outage = makeOutageLog()

  const slot = () => (held !== undefined && realMs() < held.safeUntilMs ? held.slot : undefined)

  const attempt = Effect.gen(function* () {
    if (closed) return
    const askedAtMs = realMs()
    const got = yield* store.hold(route, binds)
    const before = slot()
    held = got === undefined ? undefined : { slot: got, safeUntilMs: askedAtMs + slotLeaseTtlMs - slotSafetyMs }
    if (got !== undefined) {
      if (before === undefined)
        yield* Effect.logInfo("SMPP bind slot taken").pipe(Effect.annotateLogs({ route, slot: got, binds }))
    } else if (before !== undefined) {
      yield* Effect.logWarning("SMPP bind slot lost").pipe(Effect.annotateLogs({ route, slot: before }))
    }
    yield* outage.succeeded("SMPP bind slots renewed again")
  }).pipe(
    oneAtATime.withPermits(1),
    Effect.catchCause((cause) => outage.failed("SMPP bind slot not renewed", cause))
  )

  return {
    slots: binds,
    slot,
    awaitHeld: Effect.gen(function* () {
      while (slot() === undefined && !closed) yield* Effect.sleep(heldPollMs)
    }),
    attempt,
    run: Effect.sleep(slotRenewMs).pipe(
      Effect.andThen(attempt.pipe(Effect.repeat({ schedule: Schedule.spaced(slotRenewMs), while: () => !closed }))),
      Effect.asVoid
    ),
    close: Effect.gen(function* () {
      closed = true
      held = undefined
      yield* store
        .release(route)
        .pipe(
          Effect.catchCause((cause) => Effect.logWarning("SMPP bind slot not given up; it runs out by itself", cause))
        )
    }).pipe(oneAtATime.withPermits(1))
  }
}
