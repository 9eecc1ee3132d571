/** The help text of `sms-admin`: one entry per command, shared by `--help` and the usage-error hints. */

/** The five permissions an API key can hold (spec 5.4); test/cli checks this copy against src/domain/Permissions.ts. */
export const permissionNames = ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"] as const
export type PermissionName = typeof permissionNames[number]

export const commandNames = [
  "org create",
  "org show",
  "org update",
  "key create",
  "key revoke",
  "credits grant",
  "sender set",
  "message show",
  "message erase"
] as const
export type CommandName = typeof commandNames[number]

interface CommandHelp {
  readonly synopsis: string
  readonly summary: string
}

export const commandHelp: Readonly<Record<CommandName, CommandHelp>> = {
  "org create": {
    synopsis: "org create <name> [--sender NAME]",
    summary: "Create an organisation; its default sender (INFO unless --sender) is registered active."
  },
  "org show": {
    synopsis: "org show <org_id>",
    summary: "Show an organisation and its credit balance."
  },
  "org update": {
    synopsis: "org update <org_id> [--sms-enabled true|false] [--sender NAME]",
    summary: "Enable or disable SMS sending, or change the default sender."
  },
  "key create": {
    synopsis: "key create <org_id> (--permissions P1,P2,... | --all)",
    summary: "Issue an API key; the key itself is printed only this once."
  },
  "key revoke": {
    synopsis: "key revoke <key_id>",
    summary: "Revoke an API key; it answers 401 invalid_api_key from then on."
  },
  "credits grant": {
    synopsis: "credits grant <org_id> <amount> [--valid-until YYYY-MM-DD]",
    summary: "Grant credits, valid through the given UTC date (default: never expire)."
  },
  "sender set": {
    synopsis: "sender set <org_id> <name> --active true|false",
    summary: "Register a sender name, or activate or deactivate it."
  },
  "message show": {
    synopsis: "message show <org_id> <message_id>",
    summary: "Show a message of an organisation."
  },
  "message erase": {
    synopsis: "message erase <org_id> <message_id>",
    summary: "Erase the personal data (recipient, sender) of a message whose processing is finished."
  }
}

export const defaultUrl = "http://127.0.0.1:8080"

/** Exit statuses. */
export const exitCodes = {
  ok: 0,
  apiError: 1,
  networkError: 2,
  usage: 64
} as const

/** The full help text, ending with a newline. */
export const usageText = (): string =>
  [
    "sms-admin: manage the SMS service through its operator API (/admin/v1).",
    "",
    "Usage: sms-admin <command> [arguments] [options]",
    "",
    "Commands:",
    ...commandNames.flatMap((name) => [`  ${commandHelp[name].synopsis}`, `      ${commandHelp[name].summary}`]),
    "",
    "Options:",
    `  --url URL      base URL of the service (default: $SMS_ADMIN_URL, else ${defaultUrl})`,
    "  --token TOKEN  operator token (default: $SMS_ADMIN_TOKEN; one of them is required)",
    "  --json         print the API's raw JSON answer instead of readable text",
    "  -h, --help     print this help",
    "",
    `Permissions: ${permissionNames.join(", ")}.`,
    "",
    "Exit status: 0 done, 1 the API answered an error (printed to stderr as `error: <code>: <message>`),",
    "2 the service could not be reached, 64 usage error.",
    ""
  ].join("\n")

/** The one-line usage of a command, for usage-error hints. */
export const commandUsage = (name: CommandName): string => `usage: sms-admin ${commandHelp[name].synopsis}`
