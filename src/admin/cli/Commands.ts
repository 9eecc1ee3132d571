/**
 * The commands of sms-admin, one per operator API endpoint, grouped as `org`, `key`, `credits`,
 * `sender`, `message`, `webhook`, `inbound` (InboundCommands.ts) and `clock`. Each calls the endpoint through the typed client of AdminApi: a renamed
 * endpoint, parameter or field breaks this file's build, never a run.
 */
import { Effect, Option, Schema, SchemaTransformation } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { retentionDaysMax } from "../../config/Config.ts"
import { CalendarDate } from "../../domain/Dates.ts"
import { type Permission, Permissions, PermissionSchema } from "../../domain/Permissions.ts"
import { SenderName } from "../../domain/SenderName.ts"
import { listPageMax } from "../AdminApi.ts"
import * as Format from "./format.ts"
import { inbound } from "./InboundCommands.ts"
import { checkSharedFlags, respond, root } from "./Root.ts"

const orgId = Argument.String("org_id").pipe(Argument.withDescription("The organisation's id"))
const messageId = Argument.String("message_id").pipe(Argument.withDescription("The message's id"))
const sender = Flag.String("sender").pipe(Flag.withSchema(SenderName), Flag.withMetavar("NAME"))
const trueOrFalse = (name: string) =>
  Flag.ChoiceWithValue(name, [
    ["true", true],
    ["false", false]
  ] as const)

/** Rejects a command line the flags' own parsing accepts but the command cannot run. */
const usage = (message: string) => Effect.fail(new CliError.ValidationError({ message }))

const orgCreate = Command.make(
  "create",
  {
    name: Argument.String("name").pipe(
      Argument.withSchema(Schema.NonEmptyString),
      Argument.withDescription("The organisation's name")
    ),
    sender: sender.pipe(
      Flag.optional,
      Flag.withDescription("Its default sender (INFO unless given), registered active")
    )
  },
  ({ name, sender }) =>
    respond(
      (operator) =>
        operator.admin.createOrganisation({
          payload: {
            name,
            ...Option.match(sender, { onNone: () => ({}), onSome: (s) => ({ default_sender_name: s }) })
          }
        }),
      Format.organisation
    )
).pipe(Command.withDescription("Create an organisation; its default sender is registered active."))

const orgShow = Command.make("show", { orgId }, ({ orgId }) =>
  respond((operator) => operator.admin.getOrganisation({ params: { org_id: orgId } }), Format.organisation)
).pipe(Command.withDescription("Show an organisation and its credit balance."))

/** `--retention-days`: a number of days from 1, or `default` (the service's SMS_RETENTION_DAYS). */
const RetentionDays = Schema.Union([
  Schema.Literal("default").pipe(
    Schema.decodeTo(
      Schema.Null,
      SchemaTransformation.transform({ decode: () => null, encode: () => "default" as const })
    )
  ),
  Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: retentionDaysMax }))
])

const orgUpdate = Command.make(
  "update",
  {
    orgId,
    smsEnabled: trueOrFalse("sms-enabled").pipe(Flag.optional, Flag.withDescription("Enable or disable sending SMS")),
    sender: sender.pipe(Flag.optional, Flag.withDescription("New default sender, registered active unless known")),
    retentionDays: Flag.String("retention-days").pipe(
      Flag.withSchema(RetentionDays),
      Flag.optional,
      Flag.withMetavar("DAYS|default"),
      Flag.withDescription(
        "Days a finished message's personal data is kept, or 'default' for the service's SMS_RETENTION_DAYS"
      )
    )
  },
  ({ orgId, smsEnabled, sender, retentionDays }) =>
    respond(
      (operator) =>
        operator.admin.updateOrganisation({
          params: { org_id: orgId },
          payload: {
            ...Option.match(smsEnabled, { onNone: () => ({}), onSome: (v) => ({ sms_enabled: v }) }),
            ...Option.match(sender, { onNone: () => ({}), onSome: (s) => ({ default_sender_name: s }) }),
            ...Option.match(retentionDays, { onNone: () => ({}), onSome: (d) => ({ retention_days: d }) })
          }
        }),
      Format.organisation
    )
).pipe(
  Command.validate(({ smsEnabled, sender, retentionDays }) =>
    Option.isNone(smsEnabled) && Option.isNone(sender) && Option.isNone(retentionDays)
      ? usage("'org update' needs --sms-enabled, --sender or --retention-days")
      : Effect.void
  ),
  Command.withDescription(
    "Enable or disable SMS sending, change the default sender or the retention of finished messages."
  )
)

const orgList = Command.make(
  "list",
  {
    limit: Flag.Int("limit").pipe(
      Flag.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: listPageMax }))),
      Flag.optional,
      Flag.withDescription(`Organisations per page, 1 to ${listPageMax} (default ${listPageMax})`)
    ),
    cursor: Flag.String("cursor").pipe(
      Flag.optional,
      Flag.withDescription("Continue after a previous page (its next_cursor)")
    )
  },
  ({ limit, cursor }) =>
    respond(
      (operator) =>
        operator.admin.listOrganisations({
          query: {
            ...Option.match(limit, { onNone: () => ({}), onSome: (n) => ({ limit: n }) }),
            ...Option.match(cursor, { onNone: () => ({}), onSome: (c) => ({ cursor: c }) })
          }
        }),
      Format.organisationPage
    )
).pipe(Command.withDescription("List organisations, newest first, a page at a time."))

const org = Command.make("org").pipe(
  Command.withDescription("Organisations"),
  Command.withSubcommands([orgCreate, orgShow, orgUpdate, orgList])
)

/** The names `--permissions` was given: comma-separated, the flag repeatable. */
const permissionNames = (values: ReadonlyArray<string>): ReadonlyArray<string> =>
  values
    .flatMap((v) => v.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "")

const isPermission = Schema.is(PermissionSchema)

/** The permissions named, each once, in the order given. */
const permissionList = (values: ReadonlyArray<string>): ReadonlyArray<Permission> =>
  [...new Set(permissionNames(values))].filter(isPermission)

const keyCreate = Command.make(
  "create",
  {
    orgId,
    permissions: Flag.String("permissions").pipe(
      Flag.atLeast(0),
      Flag.withMetavar("P1,P2,..."),
      Flag.withDescription(`Permissions of the key, comma-separated: ${Permissions.join(", ")}`)
    ),
    all: Flag.Boolean("all").pipe(
      Flag.withDefault(false),
      Flag.withDescription(`Every permission (${Permissions.join(", ")})`)
    )
  },
  ({ orgId, permissions, all }) =>
    respond(
      (operator) =>
        operator.admin.createApiKey({
          params: { org_id: orgId },
          payload: { permissions: all ? Permissions : permissionList(permissions) }
        }),
      (key) => Format.issuedKey(orgId, key)
    )
).pipe(
  Command.validate(({ permissions, all }) => {
    const unknown = permissionNames(permissions).filter((name) => !isPermission(name))
    if (all && permissions.length > 0) return usage("give --permissions or --all, not both")
    if (unknown.length > 0)
      return usage(`unknown permission '${unknown[0]}' (expected some of: ${Permissions.join(", ")})`)
    if (!all && permissionList(permissions).length === 0)
      return usage("'key create' needs --permissions P1,P2,... or --all")
    return Effect.void
  }),
  Command.withDescription("Issue an API key; the key itself is printed only this once.")
)

const keyRevoke = Command.make(
  "revoke",
  { keyId: Argument.String("key_id").pipe(Argument.withDescription("The key's id")) },
  ({ keyId }) =>
    respond(
      (operator) => operator.admin.revokeApiKey({ params: { key_id: keyId } }),
      (r) =>
        Format.table([
          ["key id", r.key_id],
          ["revoked", Format.show(r.revoked)]
        ])
    )
).pipe(Command.withDescription("Revoke an API key; it answers 401 invalid_api_key from then on."))

const keyList = Command.make("list", { orgId }, ({ orgId }) =>
  respond(
    (operator) => operator.admin.listApiKeys({ params: { org_id: orgId } }),
    (r) => Format.keyList(r.results)
  )
).pipe(
  Command.withDescription("List an organisation's keys: ids, permissions, created and revoked (never the secrets).")
)

const key = Command.make("key").pipe(
  Command.withDescription("API keys"),
  Command.withSubcommands([keyCreate, keyRevoke, keyList])
)

const creditsGrant = Command.make(
  "grant",
  {
    orgId,
    amount: Argument.Int("amount").pipe(
      Argument.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000_000 }))),
      Argument.withDescription("Credits to grant (1 credit = 1 segment)")
    ),
    validUntil: Flag.String("valid-until").pipe(
      Flag.withSchema(CalendarDate),
      Flag.optional,
      Flag.withMetavar("YYYY-MM-DD"),
      Flag.withDescription("Last UTC day the credits can be used (default: they never expire)")
    )
  },
  ({ orgId, amount, validUntil }) =>
    respond(
      (operator) =>
        operator.admin.grantCredits({
          params: { org_id: orgId },
          payload: { amount, ...Option.match(validUntil, { onNone: () => ({}), onSome: (d) => ({ valid_until: d }) }) }
        }),
      (r) =>
        Format.table([
          ["organisation", orgId],
          ["granted", `${amount} credits, valid until ${Option.getOrElse(validUntil, () => "-")}`],
          ["balance", Format.balanceLine(r.balance)]
        ])
    )
).pipe(Command.withDescription("Grant credits, valid through the given UTC date."))

const credits = Command.make("credits").pipe(
  Command.withDescription("Credits"),
  Command.withSubcommands([creditsGrant])
)

const senderSet = Command.make(
  "set",
  {
    orgId,
    name: Argument.String("name").pipe(Argument.withDescription("The sender name")),
    active: trueOrFalse("active").pipe(Flag.withDescription("Whether messages may use it"))
  },
  ({ orgId, name, active }) =>
    respond(
      (operator) => operator.admin.setSender({ params: { org_id: orgId, name }, payload: { active } }),
      (s) =>
        Format.table([
          ["organisation", orgId],
          ["sender", s.name],
          ["active", Format.show(s.active)]
        ])
    )
).pipe(Command.withDescription("Register a sender name, or activate or deactivate it."))

const senderList = Command.make("list", { orgId }, ({ orgId }) =>
  respond(
    (operator) => operator.admin.listSenders({ params: { org_id: orgId } }),
    (r) => Format.senderList(r.results)
  )
).pipe(Command.withDescription("List an organisation's sender names and whether each is active."))

const senderGroup = Command.make("sender").pipe(
  Command.withDescription("Sender names"),
  Command.withSubcommands([senderSet, senderList])
)

const messageShow = Command.make("show", { messageId }, ({ messageId }) =>
  respond((operator) => operator.admin.findMessage({ params: { message_id: messageId } }), Format.operatorMessage)
).pipe(Command.withDescription("Show a message, its organisation and its timeline, by its id alone."))

const messageErase = Command.make("erase", { orgId, messageId }, ({ orgId, messageId }) =>
  respond(
    (operator) => operator.admin.eraseMessage({ params: { org_id: orgId, message_id: messageId } }),
    Format.message
  )
).pipe(
  Command.withDescription(
    "Erase the personal data (recipient, sender, text) of a message whose processing is finished."
  )
)

const messageVerify = Command.make("verify", { orgId, messageId }, ({ orgId, messageId }) =>
  respond(
    (operator) => operator.admin.verifyMessage({ params: { org_id: orgId, message_id: messageId } }),
    Format.messageWithTimeline
  )
).pipe(
  Command.withDescription(
    "Ask the provider again now about an unknown message, and start its verification schedule again."
  )
)

const message = Command.make("message").pipe(
  Command.withDescription("Messages"),
  Command.withSubcommands([messageShow, messageErase, messageVerify])
)

const webhookList = Command.make("list", { orgId }, ({ orgId }) =>
  respond(
    (operator) => operator.webhooks.list({ params: { org_id: orgId } }),
    (r) => Format.webhookList(r.results)
  )
).pipe(Command.withDescription("List an organisation's webhook endpoints (never their secrets)."))

const webhookDisable = Command.make(
  "disable",
  {
    orgId,
    webhookId: Argument.String("webhook_id").pipe(Argument.withDescription("The endpoint's id"))
  },
  ({ orgId, webhookId }) =>
    respond(
      (operator) =>
        operator.webhooks.setEnabled({ params: { org_id: orgId, webhook_id: webhookId }, payload: { enabled: false } }),
      (w) => Format.webhookList([w])
    )
).pipe(Command.withDescription("Disable one of an organisation's webhook endpoints: nothing more is sent to it."))

const webhook = Command.make("webhook").pipe(
  Command.withDescription("Status webhook endpoints"),
  Command.withSubcommands([webhookList, webhookDisable])
)

const clockShow = Command.make("show", {}, () =>
  respond(
    (operator) => operator.clock.get(),
    (c) =>
      Format.table([
        ["now", c.now],
        ["mode", c.mode]
      ])
  )
).pipe(Command.withDescription("Show the service's clock and whether it is a test clock (SMS_CLOCK=test)."))

const clockAdvance = Command.make(
  "advance",
  {
    seconds: Flag.Finite("seconds").pipe(
      Flag.optional,
      Flag.withDescription("Move the test clock forward by this many seconds")
    ),
    to: Flag.String("to").pipe(
      Flag.optional,
      Flag.withMetavar("RFC3339"),
      Flag.withDescription("Move the test clock to this instant (with its offset)")
    )
  },
  ({ seconds, to }) =>
    respond(
      (operator) =>
        operator.clock.advance({
          payload: {
            ...Option.match(seconds, { onNone: () => ({}), onSome: (s) => ({ seconds: s }) }),
            ...Option.match(to, { onNone: () => ({}), onSome: (t) => ({ to: t }) })
          }
        }),
      (c) => Format.table([["now", c.now]])
    )
).pipe(
  Command.validate(({ seconds, to }) =>
    Option.isSome(seconds) === Option.isSome(to)
      ? usage("'clock advance' needs --seconds or --to (one of them)")
      : Effect.void
  ),
  Command.withDescription("Advance the test clock; answers once every piece of work due by then is done.")
)

const clock = Command.make("clock").pipe(
  Command.withDescription("The service's clock"),
  Command.withSubcommands([clockShow, clockAdvance])
)

/** The whole command tree; the shared flags are checked before any command runs. */
export const smsAdmin = root.pipe(
  Command.withSubcommands([org, key, credits, senderGroup, message, webhook, inbound, clock]),
  Command.validate(checkSharedFlags)
)
