/**
 * Environment variables read through the current ConfigProvider (`ConfigProvider.fromEnv` in a
 * process, a record in tests), each into a typed value or one line naming it, and `every` to read
 * a configuration's fields together so that all its bad variables are told at once: the pieces
 * every configuration of the project (the service's, the SMSC simulator's) is built from.
 * Effect's own `Config.all` stops at the first bad value, and its messages are not ours.
 */
import { Config, Data, Effect, Option, Result } from "effect"

/** A configuration that cannot be used: one line per problem, each naming its variable. */
export class InvalidConfig extends Data.TaggedError("InvalidConfig")<{ readonly lines: ReadonlyArray<string> }> {}

/** A value read from the configuration, or the lines that refuse it. */
export type Field<A> = Effect.Effect<A, InvalidConfig>

export const refuse = (...lines: ReadonlyArray<string>): Field<never> => Effect.fail(new InvalidConfig({ lines }))

/** The variable's trimmed value; undefined when it is unset or blank. */
export const present = (name: string): Field<string | undefined> =>
  Config.option(Config.String(name)).pipe(
    Effect.map((raw) =>
      Option.getOrUndefined(
        Option.filter(
          Option.map(raw, (s) => s.trim()),
          (s) => s !== ""
        )
      )
    ),
    Effect.catch((error) => refuse(`${name} cannot be read (${error.message})`))
  )

/** The variable's value as `parse` gives it, `fallback` when unset; `<name> <why(raw)>` when `parse` refuses it (undefined). */
export const variable = <A>(
  name: string,
  fallback: A,
  parse: (raw: string) => A | undefined,
  why: (raw: string) => string
): Field<A> =>
  Effect.flatMap(present(name), (raw) => {
    if (raw === undefined) return Effect.succeed(fallback)
    const value = parse(raw)
    return value === undefined ? refuse(`${name} ${why(raw)}`) : Effect.succeed(value)
  })

/** An integer from `min` to `max`, `fallback` when unset. */
export const integer = (name: string, fallback: number, min: number, max: number): Field<number> =>
  variable(
    name,
    fallback,
    (raw) => {
      const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
      return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined
    },
    (raw) => `must be an integer from ${min} to ${max} (got "${raw}")`
  )

/** One of `allowed` (case-insensitive), `fallback` when unset. */
export const oneOf = <const A extends string>(name: string, fallback: A, allowed: ReadonlyArray<A>): Field<A> =>
  variable(
    name,
    fallback,
    (raw) => allowed.find((a) => a === raw.toLowerCase()),
    (raw) => `must be one of ${allowed.join(", ")} (got "${raw}")`
  )

/** true/false, 1/0 or yes/no, `fallback` when unset. */
export const boolean = (name: string, fallback: boolean): Field<boolean> =>
  Effect.map(oneOf(name, fallback ? "true" : "false", ["true", "false", "1", "0", "yes", "no"]), (v) =>
    ["true", "1", "yes"].includes(v)
  )

/** The variable's value as it is, `fallback` when unset. */
export const text = (name: string, fallback: string): Field<string> =>
  Effect.map(present(name), (raw) => raw ?? fallback)

/** Reads every field, each on its own: all their values, or the lines of every refused one in the fields' order. */
export const every = <const F extends Record<string, Field<unknown>>>(
  fields: F
): Field<{ -readonly [K in keyof F]: Effect.Success<F[K]> }> =>
  Effect.gen(function* () {
    const values: Record<string, unknown> = {}
    const lines: Array<string> = []
    for (const [key, field] of Object.entries(fields)) {
      const result = yield* Effect.result(field)
      if (Result.isSuccess(result)) values[key] = result.success
      else lines.push(...result.failure.lines)
    }
    return lines.length > 0 ? yield* refuse(...lines) : (values as { -readonly [K in keyof F]: Effect.Success<F[K]> })
  })

/** Tells a refused configuration on stderr, one `configuration error:` line per problem. */
export const printLines = ({ lines }: InvalidConfig) =>
  Effect.sync(() => {
    for (const line of lines) process.stderr.write(`configuration error: ${line}\n`)
  })
