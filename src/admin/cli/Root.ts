/**
 * The root of sms-admin: the flags every command shares (--url, --token, --json, with
 * SMS_ADMIN_URL and SMS_ADMIN_TOKEN behind them), and `respond`, which calls the operator API
 * through its typed client and prints the answer or the error.
 */
import { Config, Console, Data, Effect, Option, Redacted, Schema } from "effect"
import { CliError, Command, Flag } from "effect/cli"
import { HttpClient, HttpClientError, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import type { ErrorDetail } from "../../domain/Errors.ts"
import { AdminApi } from "../AdminApi.ts"
import * as Format from "./format.ts"

const defaultUrl = "http://127.0.0.1:8080"

/** How long a call waits for the service's answer. */
const answerTimeout = "30 seconds"

/** Exit statuses of sms-admin. */
export const exitCodes = { ok: 0, apiError: 1, unreachable: 2, usage: 64 } as const

/** A command that failed after saying why on stderr; `exitCode` is 1 or 2. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly exitCode: number }> {}

/** The root command: no action of its own, the shared flags every command reads through `respond`. */
export const root = Command.make("sms-admin").pipe(
  Command.withSharedFlags({
    url: Flag.String("url").pipe(
      Flag.withFallbackConfig(Config.String("SMS_ADMIN_URL")),
      Flag.withDefault(defaultUrl),
      Flag.withDescription(`Base URL of the service (default: $SMS_ADMIN_URL, else ${defaultUrl})`)
    ),
    token: Flag.Redacted("token").pipe(
      Flag.withFallbackConfig(Config.Redacted("SMS_ADMIN_TOKEN")),
      Flag.optional,
      Flag.withDescription("Operator token (default: $SMS_ADMIN_TOKEN; one of them is required)")
    ),
    json: Flag.Boolean("json").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Print the API's JSON answer (errors: its error body, on stderr) instead of text")
    )
  }),
  Command.withDescription("Manage the SMS service through its operator API (/admin/v1).")
)

/** Why the shared flags cannot be used, if they cannot: checked before any command runs. */
export const checkSharedFlags = (flags: {
  readonly url: string
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly json: boolean
}) => {
  const problem =
    urlProblem(flags.url) ??
    (Option.isNone(flags.token) || Redacted.value(flags.token.value).trim() === ""
      ? "no operator token: pass --token TOKEN or set SMS_ADMIN_TOKEN (the server prints it when it starts)"
      : undefined)
  return problem === undefined ? Effect.void : Effect.fail(new CliError.ValidationError({ message: problem }))
}

const urlProblem = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `--url must be an http(s) URL such as ${defaultUrl}, not '${url}'`
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return `--url must be an http(s) URL such as ${defaultUrl}, not '${url}'`
  if (parsed.search !== "" || parsed.hash !== "")
    return `--url must be a base URL without query or fragment, not '${url}'`
  return undefined
}

/** The typed client's failures: what the HTTP layer says, an answer that does not fit, or the spec's error body. */
type Failure =
  | HttpClientError.HttpClientError
  | Schema.SchemaError
  | {
      readonly error: { readonly code: string; readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> }
      readonly message_id?: string
    }

const failure = (error: Failure, json: boolean): { readonly text: string; readonly exitCode: number } => {
  if (error instanceof HttpClientError.HttpClientError) {
    const reason = error.reason
    switch (reason._tag) {
      case "TransportError":
      case "InvalidUrlError":
      case "EncodeError":
        return {
          text: `error: cannot reach the SMS service at ${reason.request.url}: ${reason.description ?? causeLine(reason.cause)}`,
          exitCode: exitCodes.unreachable
        }
      default:
        return {
          text: `error: http_${reason.response.status}: the service answered HTTP ${reason.response.status} without the API's error body`,
          exitCode: exitCodes.apiError
        }
    }
  }
  if (Schema.isSchemaError(error)) {
    return {
      text: `error: the request or its answer does not fit the operator API: ${error.message}`,
      exitCode: exitCodes.apiError
    }
  }
  const body = { error: error.error, ...(error.message_id === undefined ? {} : { message_id: error.message_id }) }
  return { text: json ? JSON.stringify(body, null, 2) : Format.apiError(body), exitCode: exitCodes.apiError }
}

/** The innermost cause's code and message, as Node reports a failed connection. */
const causeLine = (cause: unknown): string => {
  let current = cause
  let line = cause instanceof Error ? cause.message : String(cause)
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { readonly code?: unknown }).code
    line = typeof code === "string" && !current.message.includes(code) ? `${code}: ${current.message}` : current.message
    current = current.cause
  }
  return line === "" ? "unknown network error" : line
}

/** The operator API's typed client for this run's URL and token, answers awaited at most `answerTimeout`. */
const operatorClient = Effect.gen(function* () {
  const { url, token } = yield* root
  return yield* HttpApiClient.make(AdminApi, {
    baseUrl: url.replace(/\/+$/, ""),
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest(HttpClientRequest.bearerToken(Option.getOrElse(token, () => Redacted.make("")))),
        HttpClient.transform((response, request) =>
          Effect.timeoutOrElse(response, {
            duration: answerTimeout,
            orElse: () =>
              Effect.fail(
                new HttpClientError.HttpClientError({
                  reason: new HttpClientError.TransportError({ request, description: "no answer in time" })
                })
              )
          })
        )
      )
  })
})

/** The operator API's endpoints, as the commands call them. */
/** The typed client of the operator API: `admin` (organisations, keys, credits, senders, messages) and `clock`. */
export type Operator = Effect.Success<typeof operatorClient>

/**
 * Calls the operator API and prints the answer: `render` of it, or its JSON with --json. A failure
 * is printed on stderr and ends the command with CommandFailed (1: the API answered an error,
 * 2: no answer).
 */
export const respond = <A, E extends Failure, R>(
  call: (operator: Operator) => Effect.Effect<A, E, R>,
  render: (answer: A) => string
) =>
  Effect.gen(function* () {
    const { json } = yield* root
    const client = yield* operatorClient
    return yield* call(client).pipe(
      Effect.flatMap((answer) => Console.log(json ? JSON.stringify(answer, null, 2) : render(answer))),
      Effect.catch((error: E) => {
        const { text, exitCode } = failure(error, json)
        return Console.error(text).pipe(Effect.andThen(Effect.fail(new CommandFailed({ exitCode }))))
      })
    )
  })
