/**
 * Readable output of sms-admin: aligned `label  value` lines for one resource, a table with a
 * header row for a list. Each function takes the operator API's answer as its schema types it,
 * and returns text without a final newline.
 */
import type { Balance, Message, Webhook } from "../../api/Schemas.ts"
import type { ErrorDetail } from "../../domain/Errors.ts"
import type {
  ApiKeySummary,
  MessageWithTimeline,
  OperatorMessage,
  OperatorWebhook,
  OrganisationBody,
  OrganisationPage,
  SenderBody,
  TimelineEntry
} from "../AdminApi.ts"

type Row = readonly [label: string, value: string]

/** `-` for null, yes/no for booleans, `(none)` for an empty list, a comma-separated list otherwise. */
export const show = (v: string | number | boolean | null | ReadonlyArray<string>): string => {
  if (v === null) return "-"
  if (typeof v === "boolean") return v ? "yes" : "no"
  if (typeof v === "string" || typeof v === "number") return String(v)
  return v.length === 0 ? "(none)" : v.join(", ")
}

/** Rows with their values aligned two spaces after the longest label. */
export const table = (rows: ReadonlyArray<Row>): string => {
  const width = Math.max(0, ...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`.trimEnd()).join("\n")
}

/** A header row and data rows in columns two spaces apart; `(none)` under the header when there is no row. */
export const columns = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(header), ...(rows.length === 0 ? ["(none)"] : rows.map(line))].join("\n")
}

/** A balance (docs/integrators.md#balance) on one line: `total 1000  reserved 0  available 1000  valid until -`. */
export const balanceLine = (b: Balance): string =>
  `total ${b.total}  reserved ${b.reserved}  available ${b.available}  valid until ${show(b.valid_until)}`

type Organisation = typeof OrganisationBody.Type

/** An organisation, with its balance when the answer has one. */
export const organisation = (o: Organisation & { readonly balance?: Balance }): string =>
  table([
    ["id", o.id],
    ["name", o.name],
    ["sms enabled", show(o.sms_enabled)],
    ["default sender", o.default_sender_name],
    ["retention", o.retention_days === null ? "the service's default" : `${o.retention_days} days`],
    ...(o.balance === undefined ? [] : [["balance", balanceLine(o.balance)] as const])
  ])

/** One page of organisations, and how to ask for the next one. */
export const organisationPage = (page: typeof OrganisationPage.Type): string => {
  const list = columns(
    ["ID", "NAME", "SMS", "DEFAULT SENDER", "CREATED"],
    page.results.map((o) => [o.id, o.name, show(o.sms_enabled), o.default_sender_name, o.created_at])
  )
  return page.next_cursor === null ? list : `${list}\n\nmore: sms-admin org list --cursor ${page.next_cursor}`
}

/** A key just issued: the key itself first, with its only-once warning. */
export const issuedKey = (
  orgId: string,
  k: { readonly key_id: string; readonly api_key: string; readonly permissions: ReadonlyArray<string> }
): string =>
  [
    `API key: ${k.api_key}`,
    "",
    "  This key is shown only once: store it now. It cannot be read again;",
    "  if it is lost, revoke it and create a new one.",
    "",
    table([
      ["key id", k.key_id],
      ["organisation", orgId],
      ["permissions", show(k.permissions)]
    ])
  ].join("\n")

/** An organisation's keys: ids, permissions, when created and revoked (never a secret). */
export const keyList = (keys: ReadonlyArray<typeof ApiKeySummary.Type>): string =>
  columns(
    ["KEY ID", "PERMISSIONS", "CREATED", "REVOKED"],
    keys.map((k) => [k.key_id, show(k.permissions), k.created_at, show(k.revoked_at)])
  )

/** An organisation's webhook endpoints, then a line for each whose URL the address rules refuse. */
export const webhookList = (
  endpoints: ReadonlyArray<typeof Webhook.Type & Partial<Pick<typeof OperatorWebhook.Type, "url_refused">>>
): string =>
  [
    columns(
      ["ID", "ENABLED", "EVENTS", "URL"],
      endpoints.map((w) => [w.id, show(w.enabled), String(w.events.length), w.url])
    ),
    // an endpoint whose URL the address rules refuse now: its deliveries fail
    ...endpoints.flatMap((w) =>
      w.url_refused === null || w.url_refused === undefined ? [] : [`${w.id}: ${w.url_refused}`]
    )
  ].join("\n")

/** An organisation's senders and whether each is active. */
export const senderList = (senders: ReadonlyArray<typeof SenderBody.Type>): string =>
  columns(
    ["NAME", "ACTIVE"],
    senders.map((s) => [s.name, show(s.active)])
  )

/** Message fields in the spec's order (2.2); recipient and sender erased show as such. */
const messageRows = (m: typeof Message.Type): Array<Row> => [
  ["id", m.id],
  ["to", m.to === "" ? "(erased)" : m.to],
  ["sender name", m.sender_name === "" ? "(erased)" : m.sender_name],
  ["status", m.status],
  ["segments", show(m.segments)],
  ["send at", show(m.send_at)],
  ["delivery time", show(m.delivery_time)]
]

/** One line per status change: time, what caused it, from and to. */
const timelineLines = (timeline: ReadonlyArray<typeof TimelineEntry.Type>): Array<string> =>
  columns(
    ["AT", "SOURCE", "CHANGE"],
    timeline.map((t) => [
      t.at,
      t.source,
      `${t.from_status ?? "(new)"} -> ${t.to_status}${t.route === undefined ? "" : ` (${t.route})`}`
    ])
  )
    .split("\n")
    .map((line) => `  ${line}`)

/** Rows, then the timeline under its heading. */
const withTimeline = (rows: ReadonlyArray<Row>, timeline: ReadonlyArray<typeof TimelineEntry.Type>): string =>
  [table(rows), "", "timeline", ...timelineLines(timeline)].join("\n")

/** A message as the operator finds it: its organisation, its fields and its timeline. */
export const operatorMessage = (m: typeof OperatorMessage.Type): string =>
  withTimeline([["organisation", m.org_id], ...messageRows(m)], m.timeline)

/** A message with its timeline (after a verification asked again). */
export const messageWithTimeline = (m: typeof MessageWithTimeline.Type): string =>
  withTimeline(messageRows(m), m.timeline)

/** A message (docs/integrators.md#messages), e.g. once its personal data is erased. */
export const message = (m: typeof Message.Type): string => table(messageRows(m))

/** The spec's error body (2.10) as text: `error: <code>: <message>`, one indented line per detail, the message id. */
export const apiError = (e: {
  readonly error: { readonly code: string; readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> }
  readonly message_id?: string
}): string =>
  [
    `error: ${e.error.code}: ${e.error.message}`.trimEnd(),
    ...(e.error.details ?? []).map((d) => `  ${d.field}: ${d.message}`),
    ...(e.message_id === undefined ? [] : [`  message_id: ${e.message_id}`])
  ].join("\n")
