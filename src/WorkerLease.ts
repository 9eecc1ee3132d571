/**
 * This process's lease: a `workers` row renewed every `leaseRenewMs` while the process lives.
 * Messages a process is working on carry its id; once its lease has run out (the process died,
 * or lost the database for longer than `leaseTtlMs`), other processes recover them. A process
 * never recovers its own messages: while it runs, it is still working on them.
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { Ids } from "./Ids.ts"
import { now } from "./Time.ts"

/** How long a lease lasts without renewal. With `leaseRenewMs` and recovery's poll, a dead process's messages are recovered within 15 s. */
export const leaseTtlMs = 8_000
/** How often a live process renews its lease. */
export const leaseRenewMs = 2_000

export class WorkerLease extends Context.Service<WorkerLease, {
  /** This process's id, as stored on the messages it works on. */
  readonly workerId: string
  /** Renews the lease now (the heartbeat does it every `leaseRenewMs`). */
  readonly renew: Effect.Effect<void, SqlError.SqlError>
}>()("sms/WorkerLease") {
  /** Registers the process, renews its lease in the background, and gives it up on shutdown. */
  static readonly layer = Layer.effect(WorkerLease, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workerId = yield* (yield* Ids).uuid
    const renew = Effect.gen(function*() {
      const at = yield* now
      yield* sql`INSERT INTO workers (id, started_at, lease_until, pid)
        VALUES (${workerId}, ${at}, ${new Date(at.getTime() + leaseTtlMs)}, ${process.pid})
        ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`
    })
    yield* renew
    yield* Effect.addFinalizer(() =>
      sql`DELETE FROM workers WHERE id = ${workerId}`.pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not give up the worker lease", cause))
      )
    )
    yield* renew.pipe(
      Effect.catchCause((cause) => Effect.logWarning("worker lease not renewed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(leaseRenewMs))),
      Effect.forkScoped
    )
    return WorkerLease.of({ workerId, renew })
  }))
}
