/**
 * The provider refs of this process's acceptances still being settled: the provider said it took
 * the message, and the settlement that makes it `accepted` has not committed yet. An SMSC may send
 * the delivery receipt right behind its answer; stored while the acceptance settles, the receipt
 * would find no accepted message and wait for a retry (a second statement and a second write for
 * nearly every receipt of a busy drain). The inbox waits for these settlements first, a bounded
 * while, so that the receipt is applied by the statement that stores it. Only this process's
 * settlements are known here: a receipt for another process's message is stored pending as before.
 */
import { Context, Deferred, Duration, Effect, Layer } from "effect"

export class AcceptancesInFlight extends Context.Service<
  AcceptancesInFlight,
  {
    /** Runs `settle`, the settlement of an acceptance with provider ref `providerRef`, known as in flight until it ends. */
    readonly settling: <A, E, R>(providerRef: string, settle: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** Waits until none of `providerRefs` is being settled here, `maxMs` at the most. */
    readonly awaitSettled: (providerRefs: ReadonlyArray<string>, maxMs: number) => Effect.Effect<void>
  }
>()("sms/AcceptancesInFlight") {
  static readonly layer = Layer.sync(AcceptancesInFlight, () => {
    // per ref: how many settlements of it run, and what ends when the last one does (made only
    // once something waits for it: most acceptances settle with no receipt waiting)
    const inFlight = new Map<string, { count: number; done?: Deferred.Deferred<void> }>()

    const enter = (providerRef: string) =>
      Effect.sync(() => {
        const entry = inFlight.get(providerRef)
        if (entry !== undefined) entry.count += 1
        else inFlight.set(providerRef, { count: 1 })
      })
    const leave = (providerRef: string) =>
      Effect.suspend(() => {
        const entry = inFlight.get(providerRef)
        if (entry === undefined) return Effect.void
        entry.count -= 1
        if (entry.count > 0) return Effect.void
        inFlight.delete(providerRef)
        return entry.done === undefined ? Effect.void : Deferred.succeed(entry.done, undefined)
      })

    return AcceptancesInFlight.of({
      settling: (providerRef, settle) =>
        Effect.andThen(enter(providerRef), settle).pipe(Effect.ensuring(leave(providerRef))),
      awaitSettled: (providerRefs, maxMs) =>
        Effect.suspend(() => {
          const waits = providerRefs.flatMap((ref) => {
            const entry = inFlight.get(ref)
            if (entry === undefined) return []
            entry.done ??= Deferred.makeUnsafe<void>()
            return [Deferred.await(entry.done)]
          })
          return waits.length === 0
            ? Effect.void
            : Effect.all(waits, { discard: true }).pipe(
                Effect.timeoutOrElse({ duration: Duration.millis(maxMs), orElse: () => Effect.void })
              )
        })
    })
  })
}
