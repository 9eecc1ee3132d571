/**
 * What every answer must be: never a 500; an `X-Request-Id`; every error (4xx, 5xx) JSON with
 * the spec's error body (the project's `ErrorBody`, no other key); on an endpoint, a status the
 * endpoint declares with a body its schemas for that status decode (an error code it declares,
 * a success body of its own shape); a 405 with an `Allow` that does not list the method.
 */
import { Exit, Schema } from "effect"
import { ErrorBody } from "../../../src/domain/Errors.ts"
import { type FuzzRoute, routesReached } from "./Routes.ts"
import type { Answer } from "./Wire.ts"

const strict = { onExcessProperty: "error" } as const

/** True when `json` decodes with `schema`'s JSON codec, no unknown key allowed. */
const decodes = (schema: Schema.Top, json: unknown): boolean =>
  // a response schema needs no service to decode (Schema.Top does not say so)
  Exit.isSuccess(Schema.decodeUnknownExit(Schema.toCodecJson(schema) as unknown as Schema.Codec<unknown>, strict)(json))

const decodeErrorBody = Schema.decodeUnknownExit(ErrorBody, strict)

const parseJson = (body: Buffer): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(body.toString("utf8")) }
  } catch {
    return { ok: false }
  }
}

const errorCodeOf = (body: Buffer): string | undefined => {
  const parsed = parseJson(body)
  const error =
    parsed.ok && typeof parsed.value === "object" && parsed.value !== null
      ? (parsed.value as { error?: { code?: unknown } }).error
      : undefined
  return typeof error?.code === "string" ? error.code : undefined
}

/**
 * The problems of `answer` to `method path` (empty when it is as it must be). `unstorable` names
 * the field or path parameter the request set to text no field may hold: the answer cannot be a
 * success, and a validation_error must name it (an earlier refusal, 401, 406, 415..., may come first).
 */
export const problemsOf = (
  routes: ReadonlyArray<FuzzRoute>,
  method: string,
  path: string,
  answer: Answer,
  unstorable?: string
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const { status, headers, body } = answer
  const head = method === "HEAD"
  if (status === 500) problems.push("500")
  if (!/^[!-~]{1,64}$/.test(headers["x-request-id"] ?? ""))
    problems.push(`X-Request-Id is ${JSON.stringify(headers["x-request-id"])}`)
  if (headers["x-content-type-options"] !== "nosniff")
    problems.push(`X-Content-Type-Options is ${JSON.stringify(headers["x-content-type-options"])}`)
  // what Node's parser refused was never routed (README: answered by the server before any route)
  const refused = ["bad_request", "headers_too_large", "request_timeout"].includes(errorCodeOf(body) ?? "")
  const reached = refused
    ? []
    : routesReached(routes, method, path.split("?")[0]!).filter((r) => r.answers !== undefined)
  if (reached.length > 0 && !reached.some((r) => r.answers!.has(status)))
    problems.push(`status ${status} is not declared by ${reached.map((r) => r.key).join(", ")}`)
  if (status === 405 && headers.allow === undefined) problems.push("405 without Allow")
  if (
    status === 405 &&
    (headers.allow ?? "")
      .split(",")
      .map((m) => m.trim())
      .includes(method === "HEAD" ? "GET" : method)
  ) {
    problems.push(`405 though Allow lists ${method}`)
  }

  const json = status >= 400 || (headers["content-type"] ?? "").startsWith("application/json")
  if (status >= 400 && !(headers["content-type"] ?? "").startsWith("application/json"))
    problems.push(`error with Content-Type ${headers["content-type"]}`)
  if (head || !json) return problems
  const parsed = parseJson(body)
  if (!parsed.ok) return [...problems, `body is not JSON: ${body.toString("utf8").slice(0, 120)}`]
  if (unstorable !== undefined && status < 400)
    problems.push(`${status} though ${unstorable} holds a NUL or an unpaired surrogate`)
  if (status >= 400) {
    const decoded = decodeErrorBody(parsed.value)
    if (Exit.isFailure(decoded)) return [...problems, `not the error body: ${body.toString("utf8").slice(0, 200)}`]
    const { code, message, details } = decoded.value.error
    if (message.trim() === "") problems.push("empty error message")
    if (
      unstorable !== undefined &&
      code === "validation_error" &&
      !(details ?? []).some((d) => d.field === unstorable)
    ) {
      problems.push(`validation_error not naming ${unstorable}, which holds a NUL or an unpaired surrogate`)
    }
  }
  const declared = reached.flatMap((r) => r.answers!.get(status) ?? [])
  if (declared.length > 0 && !declared.some((schema) => decodes(schema, parsed.value))) {
    problems.push(`body does not match the schemas declared for ${status}: ${body.toString("utf8").slice(0, 200)}`)
  }
  return problems
}
