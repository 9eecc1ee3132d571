/**
 * The one line a failed start prints on stderr: what stopped it, in words an operator can act
 * on, never a stack trace or a connection string.
 */
import { Cause } from "effect"
import { HttpServerError } from "effect/http"
import type { AppConfigShape } from "../config/Config.ts"
import { StartupError } from "../db/DataDir.ts"
import { databaseProblem } from "../db/StartupProblem.ts"

const codeOf = (error: unknown): string | undefined => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}

const firstLine = (text: string) => text.split("\n")[0]!.trim()

const listenProblem = (code: string | undefined): string => {
  switch (code) {
    case "EADDRINUSE":
      return "the port is already in use (set PORT to another)"
    case "EACCES":
      return "permission denied (ports below 1024 need privileges)"
    case "EADDRNOTAVAIL":
      return "HOST is not an address of this machine"
    default:
      return code ?? "unknown error"
  }
}

/** The line that explains why the service could not start (or stopped) with `cause`. */
export const startupFailureLine = (cause: Cause.Cause<unknown>, config: AppConfigShape): string => {
  const failure = Cause.squash(cause)
  if (failure instanceof StartupError) return `cannot start: ${failure.line}`
  if (failure instanceof HttpServerError.ServeError) {
    return `cannot start: cannot listen on ${config.host}:${config.port}: ${listenProblem(codeOf(failure.cause))}`
  }
  const problem = databaseProblem(failure)
  if (problem !== undefined) {
    const where = config.databaseUrl === undefined ? "the embedded database" : "the database of DATABASE_URL"
    return `cannot start: ${where} failed (${problem})`
  }
  return `cannot start: ${firstLine(failure instanceof Error ? failure.message : String(failure))}`
}
