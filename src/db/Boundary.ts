/**
 * The service boundary of the HTTP handlers. A database failure is part of no endpoint's
 * contract, so the services handlers use are taken through `atBoundary`: each SqlError leaves
 * the handler as a defect, and the edge answers it once (503 service_unavailable when the
 * database cannot be reached, 500 internal_error otherwise; see db/SqlErrors.ts).
 */
import { type Context, Effect, Option } from "effect"
import { SqlError } from "effect/sql"

type WithoutSqlError<T> = T extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
  : T

/** A service whose effects (members and method results) no longer fail with SqlError. */
export type AtBoundary<S> = {
  readonly [K in keyof S]: S[K] extends (...args: infer Args) => infer Result ? (...args: Args) => WithoutSqlError<Result>
    : WithoutSqlError<S[K]>
}

const dieOnSqlError = (effect: Effect.Effect<unknown, unknown, unknown>) =>
  Effect.catchIf(effect, SqlError.isSqlError, Effect.die)

const bounded = (value: unknown): unknown => (Effect.isEffect(value) ? dieOnSqlError(value) : value)

const withoutSqlErrors = <S extends object>(service: S): AtBoundary<S> => {
  const wrapped: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(service)) {
    wrapped[name] = typeof member === "function"
      ? (...args: Array<unknown>) => bounded((member as (...a: Array<unknown>) => unknown).apply(service, args))
      : bounded(member)
  }
  return wrapped as AtBoundary<S>
}

/** The service of `key` as handlers use it: its SqlErrors become defects for the edge to classify. */
export const atBoundary = <I, S extends object>(key: Context.Key<I, S>): Effect.Effect<AtBoundary<S>, never, I> =>
  Effect.map(Effect.service(key), withoutSqlErrors)

/** Like `atBoundary`, for a service the application may not provide (the simulator's controls). */
export const atBoundaryOption = <I, S extends object>(key: Context.Key<I, S>): Effect.Effect<Option.Option<AtBoundary<S>>> =>
  Effect.map(Effect.serviceOption(key), Option.map(withoutSqlErrors))
