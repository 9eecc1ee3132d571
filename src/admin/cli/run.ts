/** One run of `sms-admin`: parse, call the operator API, print; returns the exit status. */
import { type Env, parseCommandLine } from "./args.ts"
import { type FetchFn, requestFor, send } from "./client.ts"
import { formatApiError, formatSuccess } from "./format.ts"
import { exitCodes, usageText } from "./usage.ts"

export interface CliIo {
  /** SMS_ADMIN_URL and SMS_ADMIN_TOKEN are read from here. */
  readonly env: Env
  readonly fetch: FetchFn
  /** Receives whole chunks of text, each ending with a newline. */
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** How long to wait for an answer (default 30 s). */
  readonly timeoutMs?: number
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

/**
 * Runs the command line `argv` (the arguments after the program name). Exit status: 0 done,
 * 1 the API answered an error, 2 no answer (network), 64 usage error.
 */
export const run = async (argv: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  if (argv.length === 0) {
    io.stderr(usageText())
    return exitCodes.usage
  }
  const parsed = parseCommandLine(argv, io.env)
  switch (parsed.kind) {
    case "help":
      io.stdout(usageText())
      return exitCodes.ok
    case "usage-error":
      io.stderr(`error: ${parsed.message}\n${parsed.hint ?? "usage: sms-admin <command> [arguments] [options]"}\n`)
      io.stderr("Run 'sms-admin --help' for every command and option.\n")
      return exitCodes.usage
    case "run": {
      const { settings, command } = parsed
      const outcome = await send(settings, io.fetch, requestFor(command), {
        ...(io.timeoutMs === undefined ? {} : { timeoutMs: io.timeoutMs })
      })
      switch (outcome.kind) {
        case "ok":
          io.stdout(settings.json ? json(outcome.body) : formatSuccess(command, outcome.body))
          return exitCodes.ok
        case "api-error":
          io.stderr(settings.json && typeof outcome.body === "object" && outcome.body !== null
            ? json(outcome.body)
            : formatApiError(outcome.error))
          return exitCodes.apiError
        case "network-error":
          io.stderr(`error: cannot reach the SMS service at ${outcome.url}: ${outcome.reason}\n`)
          return exitCodes.networkError
      }
    }
  }
}
