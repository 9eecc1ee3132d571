/**
 * This process's lease: a `workers` row renewed every `leaseRenewMs` while the process lives.
 * Messages a process is working on carry its id; once its lease has run out (the process died,
 * or lost the database for longer than `leaseTtlMs`), other processes recover them. A process
 * recovers its own only when it is no longer working on them (`working`): a message left
 * `processing` by work that ended without settling it, say an admission or a dispatch start
 * whose commit answer was lost, would otherwise wait for the process to die.
 */
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import { Ids } from "../platform/Ids.ts"
import { makeOutageLog } from "../observability/RecurringLogs.ts"
import { now } from "../clock/Time.ts"
import { WorkerStore } from "./WorkerStore.ts"

/** How long a lease lasts without renewal. With `leaseRenewMs` and recovery's poll, a dead process's messages are recovered within 15 s. */
export const leaseTtlMs = 8_000
/** How often a live process renews its lease. */
export const leaseRenewMs = 2_000

export class WorkerLease extends Context.Service<WorkerLease, {
  /** This process's id, as stored on the messages it works on. */
  readonly workerId: string
  /** Renews the lease now (the heartbeat does it every `leaseRenewMs`). */
  readonly renew: Effect.Effect<void, DatabaseUnavailable>
  /**
   * Runs `effect` as this process's work on the message `messageId`: from before its row can be
   * `processing` until its outcome is handed to settlement (whose sets run in the order handed in,
   * so recovery's own settlement of it can only come after).
   */
  readonly working: <A, E, R>(messageId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Whether this process is working on the message now. */
  readonly isWorkingOn: (messageId: string) => boolean
  /** The messages this process is working on now. */
  readonly workingOn: () => ReadonlyArray<string>
}>()("sms/WorkerLease") {
  /** Registers the process, renews its lease in the background, and gives it up on shutdown. */
  static readonly layer = Layer.effect(WorkerLease, Effect.gen(function*() {
    const store = yield* WorkerStore
    const workerId = yield* (yield* Ids).uuid
    const renew = Effect.gen(function*() {
      const at = yield* now
      yield* store.renew(workerId, at, new Date(at.getTime() + leaseTtlMs))
    })
    yield* renew
    yield* Effect.addFinalizer(() =>
      store.remove(workerId).pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not give up the worker lease", cause))
      )
    )
    const outage = makeOutageLog()
    yield* renew.pipe(
      Effect.tap(() => outage.succeeded("worker lease renewed again")),
      Effect.catchCause((cause) => outage.failed("worker lease not renewed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(leaseRenewMs))),
      Effect.forkScoped
    )
    // a count per message: a dispatch may start again on a message whose claim ran out meanwhile
    const work = new Map<string, number>()
    const working = <A, E, R>(messageId: string, effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.sync(() => void work.set(messageId, (work.get(messageId) ?? 0) + 1)),
        () => effect,
        () =>
          Effect.sync(() => {
            const left = work.get(messageId)! - 1
            if (left === 0) work.delete(messageId)
            else work.set(messageId, left)
          })
      )
    return WorkerLease.of({
      workerId,
      renew,
      working,
      isWorkingOn: (messageId) => work.has(messageId),
      workingOn: () => [...work.keys()]
    })
  })).pipe(Layer.provideMerge(WorkerStore.layer))
}
