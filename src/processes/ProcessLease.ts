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
import { ProcessStore } from "./ProcessStore.ts"

/** How long a lease lasts without renewal. With `leaseRenewMs` and recovery's poll, a dead process's messages are recovered within 15 s. */
export const leaseTtlMs = 8_000
/** How often a live process renews its lease. */
export const leaseRenewMs = 2_000

export class ProcessLease extends Context.Service<
  ProcessLease,
  {
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
    /**
     * Runs `start`, a statement that makes the messages it returns `processing` for this process
     * (a claim that starts them), uninterruptibly, and counts each one it returns as work from then
     * on: the caller runs each one's work with `resume`, which ends it.
     */
    readonly starting: <A extends { readonly id: string }, E, R>(
      start: Effect.Effect<ReadonlyArray<A>, E, R>
    ) => Effect.Effect<ReadonlyArray<A>, E, R>
    /** Runs `effect` as the work on a message `starting` returned, which ends with it. */
    readonly resume: <A, E, R>(messageId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /**
     * Runs `effect` and tells whether a `starting` statement ran at any moment meanwhile: the
     * messages it made `processing` may have been seen before they were counted as work.
     */
    readonly duringStarts: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<readonly [A, boolean], E, R>
    /** Whether this process is working on the message now. */
    readonly isWorkingOn: (messageId: string) => boolean
    /** The messages this process is working on now. */
    readonly workingOn: () => ReadonlyArray<string>
  }
>()("sms/ProcessLease") {
  /** Registers the process, renews its lease in the background, and gives it up on shutdown. */
  static readonly layer = Layer.effect(
    ProcessLease,
    Effect.gen(function* () {
      const store = yield* ProcessStore
      const workerId = yield* (yield* Ids).uuid
      const renew = Effect.gen(function* () {
        const at = yield* now
        yield* store.renew(workerId, at, new Date(at.getTime() + leaseTtlMs))
      })
      yield* renew
      yield* Effect.addFinalizer(() =>
        store
          .remove(workerId)
          .pipe(Effect.catchCause((cause) => Effect.logWarning("could not give up the worker lease", cause)))
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
      const begin = (messageId: string) => void work.set(messageId, (work.get(messageId) ?? 0) + 1)
      const end = (messageId: string) =>
        Effect.sync(() => {
          const left = work.get(messageId)! - 1
          if (left === 0) work.delete(messageId)
          else work.set(messageId, left)
        })
      const working = <A, E, R>(messageId: string, effect: Effect.Effect<A, E, R>) =>
        Effect.acquireUseRelease(
          Effect.sync(() => begin(messageId)),
          () => effect,
          () => end(messageId)
        )
      // `starting` statements running, and how many ever began
      const starts = { running: 0, begun: 0 }
      const starting = <A extends { readonly id: string }, E, R>(start: Effect.Effect<ReadonlyArray<A>, E, R>) =>
        Effect.sync(() => {
          starts.running++
          starts.begun++
        }).pipe(
          Effect.andThen(start),
          Effect.tap((started) =>
            Effect.sync(() => {
              for (const m of started) begin(m.id)
            })
          ),
          Effect.ensuring(Effect.sync(() => void starts.running--)),
          Effect.uninterruptible
        )
      const duringStarts = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const before = { ...starts }
          return Effect.map(effect, (a) => [a, before.running > 0 || starts.begun !== before.begun] as const)
        })
      return ProcessLease.of({
        workerId,
        renew,
        working,
        starting,
        resume: (messageId, effect) => Effect.ensuring(effect, end(messageId)),
        duringStarts,
        isWorkingOn: (messageId) => work.has(messageId),
        workingOn: () => [...work.keys()]
      })
    })
  ).pipe(Layer.provideMerge(ProcessStore.layer))
}
