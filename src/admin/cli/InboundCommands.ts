/**
 * `sms-admin inbound ...` (docs/two-way.md): give, take and list an
 * organisation's inbound numbers, and list inbound messages (the unrouted ones with --unrouted).
 */
import { Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { maskPhone } from "../../domain/Phone.ts"
import * as Format from "./format.ts"
import { respond } from "./Root.ts"

const orgId = Argument.String("org_id").pipe(Argument.withDescription("The organisation's id"))
const number = Argument.String("number").pipe(
  Argument.withDescription("A short code of 3 to 8 digits or an E.164 number")
)

const numberList = (rows: ReadonlyArray<{ readonly number: string; readonly keyword: string | null }>) =>
  Format.columns(
    ["NUMBER", "KEYWORD"],
    rows.map((r) => [r.number, r.keyword ?? "(dedicated)"])
  )

const assign = Command.make(
  "assign",
  {
    orgId,
    number,
    keyword: Flag.String("keyword").pipe(
      Flag.optional,
      Flag.withDescription("Share the number: messages whose first word is this keyword go to the organisation")
    )
  },
  ({ orgId, number, keyword }) =>
    respond(
      (operator) =>
        operator.inbound.assignNumber({
          params: { org_id: orgId, number },
          payload: Option.match(keyword, { onNone: () => ({}), onSome: (k) => ({ keyword: k }) })
        }),
      (n) => numberList([n])
    )
).pipe(Command.withDescription("Give the organisation an inbound number, dedicated to it or shared by a keyword."))

const remove = Command.make("remove", { orgId, number }, ({ orgId, number }) =>
  respond(
    (operator) => operator.inbound.removeNumber({ params: { org_id: orgId, number } }),
    () => "removed"
  )
).pipe(Command.withDescription("Take an inbound number (and its keywords) from the organisation."))

const numbers = Command.make("numbers", { orgId }, ({ orgId }) =>
  respond(
    (operator) => operator.inbound.listNumbers({ params: { org_id: orgId } }),
    (r) => numberList(r.results)
  )
).pipe(Command.withDescription("List the numbers the organisation receives on."))

const messages = Command.make(
  "messages",
  {
    unrouted: Flag.Boolean("unrouted").pipe(Flag.withDescription("Only the messages no organisation took")),
    cursor: Flag.String("cursor").pipe(Flag.optional, Flag.withDescription("A previous page's next_cursor"))
  },
  ({ unrouted, cursor }) =>
    respond(
      (operator) =>
        operator.inbound.listMessages({
          query: {
            ...(unrouted ? { routed: "false" as const } : {}),
            ...Option.match(cursor, { onNone: () => ({}), onSome: (c) => ({ cursor: c }) })
          }
        }),
      (page) =>
        [
          Format.columns(
            ["RECEIVED", "ORG", "FROM", "TO", "KEYWORD", "TEXT"],
            page.results.map((m) => [
              m.received_at,
              m.org_id ?? "(unrouted)",
              maskPhone(m.from),
              m.to,
              m.keyword ?? "",
              m.text.length > 40 ? `${m.text.slice(0, 39)}…` : m.text
            ])
          ),
          ...(page.next_cursor === null ? [] : [`next page: --cursor ${page.next_cursor}`])
        ].join("\n")
    )
).pipe(Command.withDescription("List inbound messages, newest first (the sender masked; --json shows it whole)."))

export const inbound = Command.make("inbound").pipe(
  Command.withDescription("Two-way messages: inbound numbers and messages"),
  Command.withSubcommands([assign, remove, numbers, messages])
)
