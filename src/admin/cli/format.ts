/** Readable output: short aligned `key  value` lines for each command's answer. */
import type { Command } from "./args.ts"
import type { ApiErrorInfo } from "./client.ts"

type Row = readonly [label: string, value: string]

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const get = (body: unknown, key: string): unknown => (isRecord(body) ? body[key] : undefined)

/** One value as text: `-` for null or missing, yes/no for booleans, compact JSON for structures. */
export const show = (v: unknown): string => {
  if (v === null || v === undefined) return "-"
  if (typeof v === "boolean") return v ? "yes" : "no"
  if (typeof v === "string" || typeof v === "number" || typeof v === "bigint") return String(v)
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.length === 0 ? "(none)" : v.join(", ")
  return JSON.stringify(v)
}

/** Rows with their values aligned two spaces after the longest label; ends with a newline. */
export const table = (rows: ReadonlyArray<Row>): string => {
  const width = Math.max(0, ...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`.trimEnd()).join("\n") + "\n"
}

/** A balance (spec 2.7) on one line: `total 1000  reserved 0  available 1000  valid until -`. */
export const balanceLine = (balance: unknown): string =>
  `total ${show(get(balance, "total"))}  reserved ${show(get(balance, "reserved"))}  available ${
    show(get(balance, "available"))
  }  valid until ${show(get(balance, "valid_until"))}`

const organisationRows = (body: unknown): Array<Row> => {
  const rows: Array<Row> = [
    ["id", show(get(body, "id"))],
    ["name", show(get(body, "name"))],
    ["sms enabled", show(get(body, "sms_enabled"))],
    ["default sender", show(get(body, "default_sender_name"))]
  ]
  if (get(body, "balance") !== undefined) rows.push(["balance", balanceLine(get(body, "balance"))])
  return rows
}

/** Message fields in the spec's order (2.2); any others the operator view adds follow. */
const messageFields = ["id", "to", "sender_name", "status", "segments", "send_at", "delivery_time"]

const messageRows = (body: unknown): Array<Row> => {
  const record = isRecord(body) ? body : {}
  const keys = [...messageFields.filter((k) => k in record), ...Object.keys(record).filter((k) => !messageFields.includes(k))]
  return keys.map((key) => {
    const value = record[key]
    const erased = (key === "to" || key === "sender_name") && value === ""
    return [key.replaceAll("_", " "), erased ? "(erased)" : show(value)] as const
  })
}

/** The readable text of a successful answer to `command`. */
export const formatSuccess = (command: Command, body: unknown): string => {
  switch (command.name) {
    case "org create":
    case "org show":
    case "org update":
      return table(organisationRows(body))
    case "key create": {
      return [
        `API key: ${show(get(body, "api_key"))}`,
        "",
        "  This key is shown only once: store it now. It cannot be read again;",
        "  if it is lost, revoke it and create a new one.",
        "",
        table([
          ["key id", show(get(body, "key_id"))],
          ["organization", command.orgId],
          ["permissions", show(get(body, "permissions"))]
        ])
      ].join("\n")
    }
    case "key revoke":
      return table([["key id", show(get(body, "key_id"))], ["revoked", show(get(body, "revoked"))]])
    case "credits grant":
      return table([
        ["organization", command.orgId],
        ["granted", `${command.amount} credits, valid until ${command.validUntil ?? "-"}`],
        ["balance", balanceLine(get(body, "balance"))]
      ])
    case "sender set":
      return table([
        ["organization", command.orgId],
        ["sender", show(get(body, "name"))],
        ["active", show(get(body, "active"))]
      ])
    case "message show":
    case "message erase":
      return table(messageRows(body))
  }
}

/** `error: <code>: <message>`, then one indented line per detail and the message id; ends with a newline. */
export const formatApiError = (error: ApiErrorInfo): string => {
  const lines = [`error: ${error.code}: ${error.message}`.trimEnd()]
  const details = error.details
  if (Array.isArray(details)) {
    for (const detail of details) {
      const field = get(detail, "field")
      const message = get(detail, "message")
      lines.push(
        typeof field === "string" && typeof message === "string" ? `  ${field}: ${message}` : `  ${show(detail)}`
      )
    }
  } else if (details !== undefined) {
    lines.push(`  ${show(details)}`)
  }
  if (error.messageId !== undefined) lines.push(`  message_id: ${error.messageId}`)
  return lines.join("\n") + "\n"
}
