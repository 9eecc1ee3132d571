/**
 * Schema failures as the error bodies of docs/integrators.md#errors: a body that is not JSON is
 * `parse_error`; every other request failure is `validation_error` whose `details` name each bad
 * or unknown field with what it allows, in the service's words ("is required", "must be a string
 * of 1 to 320 characters", "must be one of ...", "must be a JSON object"), never the schema
 * library's ("Expected MessageCreate", "Missing key").
 */
import type { SchemaAST, SchemaIssue } from "effect"
import { type ErrorDetail, ParseError, ValidationError } from "../domain/Errors.ts"

export const notJsonMessage = "Expected a valid JSON body"

/** A string annotation of a schema, a check or an issue, if it has one. */
const annotation = (annotations: object | undefined, key: string): string | undefined => {
  const value = annotations === undefined ? undefined : (annotations as Readonly<Record<string, unknown>>)[key]
  return typeof value === "string" ? value : undefined
}

interface Representation {
  readonly id: string
  readonly payload: Readonly<Record<string, unknown>>
}

/** Which of the library's checks a filter is (`effect/schema/isMinLength`...) and its parameters. */
const representationOf = (check: SchemaAST.Filter<unknown>): Representation | undefined => {
  const r =
    check.annotations === undefined
      ? undefined
      : (check.annotations as Readonly<Record<string, unknown>>).representation
  if (typeof r !== "object" || r === null) return undefined
  const { id, payload } = r as { readonly id?: unknown; readonly payload?: unknown }
  if (typeof id !== "string") return undefined
  return {
    id: id.replace(/^effect\/schema\//, ""),
    payload: typeof payload === "object" && payload !== null ? (payload as Readonly<Record<string, unknown>>) : {}
  }
}

/** Every filter of `checks`, groups flattened. */
const filtersOf = (checks: ReadonlyArray<SchemaAST.Check<unknown>> | undefined): Array<SchemaAST.Filter<unknown>> =>
  (checks ?? []).flatMap((c) => (c._tag === "Filter" ? [c] : filtersOf(c.checks)))

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`

/** The length the checks of `ast` allow, as "1 to 320 characters", "at most 100 items"; undefined when unbounded. */
const lengthSpan = (ast: SchemaAST.AST | undefined, unit: string): string | undefined => {
  let min: number | undefined
  let max: number | undefined
  for (const f of filtersOf(ast?.checks)) {
    const r = representationOf(f)
    if (r?.id === "isMinLength") min = Number(r.payload.minLength)
    else if (r?.id === "isMaxLength") max = Number(r.payload.maxLength)
    else if (r?.id === "isBetweenLength") {
      min = Number(r.payload.minimum)
      max = Number(r.payload.maximum)
    }
  }
  if (min !== undefined && min > 0 && max !== undefined) return `${min} to ${plural(max, unit)}`
  if (max !== undefined) return `at most ${plural(max, unit)}`
  if (min !== undefined && min > 0) return `at least ${plural(min, unit)}`
  return undefined
}

const isInteger = (ast: SchemaAST.AST) => filtersOf(ast.checks).some((f) => representationOf(f)?.id === "isInt")

/** What a value of `ast` is, as a noun phrase: "a string of 1 to 320 characters", "one of a, b", "a JSON object". */
const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String": {
      if (annotation(ast.annotations, "format") === "date-time") return "an RFC 3339 date-time with a timezone offset"
      const span = lengthSpan(ast, "character")
      return span === undefined ? "a string" : `a string of ${span}`
    }
    case "Number":
      return isInteger(ast) ? "an integer" : "a number"
    case "BigInt":
      return "an integer"
    case "Boolean":
      return "true or false"
    case "Null":
      return "null"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.every((t) => t._tag === "Literal")
        ? `one of ${ast.types.map((t) => (t._tag === "Literal" ? String(t.literal) : "")).join(", ")}`
        : ast.types.map(describe).join(" or ")
    case "Objects":
      return "a JSON object"
    case "Arrays": {
      const span = lengthSpan(ast, "item")
      return span === undefined ? "an array" : `an array of ${span}`
    }
    default:
      return annotation(ast.annotations, "expected") ?? "a valid value"
  }
}

/**
 * What a value of `ast` must be, for a value of the wrong type: the schema's own message, or that
 * of one of its checks that says what the value must be (a phone number's, a date's), or its description.
 */
const mustBe = (ast: SchemaAST.AST): string =>
  annotation(ast.annotations, "message") ??
  filtersOf(ast.checks)
    .map((f) => annotation(f.annotations, "message"))
    .find((m) => m?.startsWith("must be ")) ??
  `must be ${describe(ast)}`

/** Why a check refused a value of `ast` (the schema whose checks it is, when known). */
const filterMessage = (issue: SchemaIssue.Filter, ast: SchemaAST.AST | undefined): string => {
  const inner = issue.issue._tag === "InvalidValue" ? annotation(issue.issue.annotations, "message") : undefined
  const own = annotation(issue.filter.annotations, "message") ?? inner
  if (own !== undefined) return own
  const r = representationOf(issue.filter)
  const p = r?.payload ?? {}
  switch (r?.id) {
    case "isMinLength":
    case "isMaxLength":
    case "isBetweenLength":
      if (ast?._tag === "Arrays") return `must have ${lengthSpan(ast, "item") ?? "another number of items"}`
      return `must be a string of ${lengthSpan(ast, "character") ?? "another length"}`
    case "isGreaterThanOrEqualTo":
      return `must be at least ${String(p.minimum)}`
    case "isGreaterThan":
      return `must be greater than ${String(p.exclusiveMinimum ?? p.minimum)}`
    case "isLessThanOrEqualTo":
      return `must be at most ${String(p.maximum)}`
    case "isLessThan":
      return `must be less than ${String(p.exclusiveMaximum ?? p.maximum)}`
    case "isBetween":
      return `must be from ${String(p.minimum)} to ${String(p.maximum)}`
    case "isInt":
      return "must be an integer"
    case "isUnique":
      return "must not repeat an item"
    case "isPattern":
      return `must match ${String(p.source)}`
  }
  const expected = annotation(issue.filter.annotations, "expected")
  return expected === undefined ? "is not allowed" : `must be ${expected}`
}

interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Every leaf of the issue with its path and sentence; `ast` is the schema whose checks a Filter below is. */
const leaves = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  ast: SchemaAST.AST | undefined,
  override: string | undefined
): ReadonlyArray<Found> => {
  switch (issue._tag) {
    case "Filter":
      return leaves(issue.issue, path, ast, override ?? filterMessage(issue, ast))
    case "Encoding":
      return leaves(issue.issue, path, ast, override)
    case "Pointer":
      return leaves(issue.issue, [...path, ...issue.path], undefined, override)
    case "Composite":
      return issue.issues.flatMap((i) => leaves(i, path, issue.ast, override))
    case "AnyOf":
      return issue.issues.length > 0
        ? issue.issues.flatMap((i) => leaves(i, path, issue.ast, override))
        : [{ path, message: override ?? mustBe(issue.ast) }]
    case "InvalidType":
      return [{ path, message: override ?? mustBe(issue.ast) }]
    case "InvalidValue":
      return [{ path, message: override ?? annotation(issue.annotations, "message") ?? "is not a valid value" }]
    case "MissingKey":
      return [{ path, message: annotation(issue.annotations, "messageMissingKey") ?? "is required" }]
    case "UnexpectedKey":
      return [{ path, message: "is not a known field" }]
    case "Forbidden":
      return [{ path, message: override ?? annotation(issue.annotations, "message") ?? "cannot be checked" }]
    case "OneOf":
      return [{ path, message: override ?? "must match exactly one of the allowed forms" }]
  }
}

/** One detail per failing field, `field` being its dotted path (`recipients.3`), or `body` for the whole body; a field breaking several rules lists them in one message. */
export const issueDetails = (issue: SchemaIssue.Issue): ReadonlyArray<ErrorDetail> => {
  const byField = new Map<string, Array<string>>()
  for (const found of leaves(issue, [], undefined, undefined)) {
    const field = found.path.map(String).join(".") || "body"
    const messages = byField.get(field) ?? []
    if (!messages.includes(found.message)) messages.push(found.message)
    byField.set(field, messages)
  }
  return [...byField].map(([field, messages]) => ({ field, message: messages.join("; ") }))
}

/** The error's message: each field with what is wrong with it ("text is required; to is required"). */
export const detailsSentence = (details: ReadonlyArray<ErrorDetail>): string =>
  details.map((d) => `${d.field} ${d.message}`).join("; ")

/** The error a failed payload decode answers with. */
export const payloadError = (issue: SchemaIssue.Issue): ValidationError | ParseError => {
  const details = issueDetails(issue)
  return details.length === 1 && details[0]!.message === notJsonMessage
    ? ParseError.withMessage("Request body is not valid JSON")
    : ValidationError.withMessage(detailsSentence(details), { details })
}
