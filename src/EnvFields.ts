/**
 * Reading one environment variable into a typed value or one line naming it: the pieces every
 * configuration decoder of the project (the service's, the SMSC simulator's) is built from.
 */

export type Env = Readonly<Record<string, string | undefined>>
export type Field<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly line: string }

/** The variable's trimmed value, or undefined when it is unset or blank. */
export const present = (env: Env, name: string): string | undefined => {
  const raw = env[name]
  return raw === undefined || raw.trim() === "" ? undefined : raw.trim()
}

/** An integer from `min` to `max`, `fallback` when unset. */
export const integer = (env: Env, name: string, fallback: number, min: number, max: number): Field<number> => {
  const raw = present(env, name)
  if (raw === undefined) return { ok: true, value: fallback }
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  return Number.isSafeInteger(n) && n >= min && n <= max
    ? { ok: true, value: n }
    : { ok: false, line: `${name} must be an integer from ${min} to ${max} (got "${raw}")` }
}

/** One of `allowed` (case-insensitive), `fallback` when unset. */
export const oneOf = <const A extends string>(env: Env, name: string, fallback: A, allowed: ReadonlyArray<A>): Field<A> => {
  const raw = present(env, name)
  if (raw === undefined) return { ok: true, value: fallback }
  const found = allowed.find((a) => a === raw.toLowerCase())
  return found !== undefined
    ? { ok: true, value: found }
    : { ok: false, line: `${name} must be one of ${allowed.join(", ")} (got "${raw}")` }
}

/** true/false, 1/0 or yes/no, `fallback` when unset. */
export const boolean = (env: Env, name: string, fallback: boolean): Field<boolean> => {
  const raw = oneOf(env, name, fallback ? "true" : "false", ["true", "false", "1", "0", "yes", "no"])
  return raw.ok ? { ok: true, value: ["true", "1", "yes"].includes(raw.value) } : raw
}

/** The variable's value as it is, `fallback` when unset. */
export const text = (env: Env, name: string, fallback: string): Field<string> => ({ ok: true, value: present(env, name) ?? fallback })

/** The value of a field already known to be ok. */
export const valueOf = <A>(f: Field<A>): A => (f as { readonly value: A }).value
