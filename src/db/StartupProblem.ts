/** What a database failure at start says, in words an operator can act on: its kind and its code or first line, never a connection string. */
import { SqlError } from "effect/sql"

const codeOf = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}

/** `ConnectionError: ECONNREFUSED` for a database failure, undefined for anything else. */
export const databaseProblem = (failure: unknown): string | undefined =>
  SqlError.isSqlError(failure)
    ? `${failure.reason._tag}: ${codeOf(failure.reason.cause) ?? failure.message.split("\n")[0]!.trim()}`
    : undefined
