/** Command-line parsing: argv and environment to a typed command, help, or a usage error. */
import { parseArgs } from "node:util"
import { type CommandName, commandNames, commandUsage, defaultUrl, type PermissionName, permissionNames } from "./usage.ts"

export type Command =
  | { readonly name: "org create"; readonly orgName: string; readonly sender?: string }
  | { readonly name: "org show"; readonly orgId: string }
  | { readonly name: "org update"; readonly orgId: string; readonly smsEnabled?: boolean; readonly sender?: string }
  | { readonly name: "key create"; readonly orgId: string; readonly permissions: ReadonlyArray<PermissionName> }
  | { readonly name: "key revoke"; readonly keyId: string }
  | { readonly name: "credits grant"; readonly orgId: string; readonly amount: number; readonly validUntil?: string }
  | { readonly name: "sender set"; readonly orgId: string; readonly sender: string; readonly active: boolean }
  | { readonly name: "message show"; readonly orgId: string; readonly messageId: string }
  | { readonly name: "message erase"; readonly orgId: string; readonly messageId: string }

/** Where and how to talk to the operator API. */
export interface Settings {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:8080`. */
  readonly url: string
  readonly token: string
  readonly json: boolean
}

export type Parsed =
  | { readonly kind: "help" }
  | { readonly kind: "run"; readonly settings: Settings; readonly command: Command }
  /** `message` is one line; `hint` (when known) is the usage line of the command concerned. */
  | { readonly kind: "usage-error"; readonly message: string; readonly hint?: string }

export type Env = Readonly<Record<string, string | undefined>>

const options = {
  url: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  sender: { type: "string" },
  "sms-enabled": { type: "string" },
  permissions: { type: "string", multiple: true },
  all: { type: "boolean" },
  "valid-until": { type: "string" },
  active: { type: "string" }
} as const

type OptionName = keyof typeof options

/** What `parseArgs` yields for `options`: only the options given are present. */
interface Values {
  readonly url?: string | undefined
  readonly token?: string | undefined
  readonly json?: boolean | undefined
  readonly help?: boolean | undefined
  readonly sender?: string | undefined
  readonly "sms-enabled"?: string | undefined
  readonly permissions?: ReadonlyArray<string> | undefined
  readonly all?: boolean | undefined
  readonly "valid-until"?: string | undefined
  readonly active?: string | undefined
}

const globalOptions: ReadonlyArray<OptionName> = ["url", "token", "json", "help"]

/** Options each command accepts besides the global ones. */
const commandOptions: Readonly<Record<CommandName, ReadonlyArray<OptionName>>> = {
  "org create": ["sender"],
  "org show": [],
  "org update": ["sms-enabled", "sender"],
  "key create": ["permissions", "all"],
  "key revoke": [],
  "credits grant": ["valid-until"],
  "sender set": ["active"],
  "message show": [],
  "message erase": []
}

/** Positional arguments each command takes, by name (for messages). */
const commandArguments: Readonly<Record<CommandName, ReadonlyArray<string>>> = {
  "org create": ["name"],
  "org show": ["org_id"],
  "org update": ["org_id"],
  "key create": ["org_id"],
  "key revoke": ["key_id"],
  "credits grant": ["org_id", "amount"],
  "sender set": ["org_id", "name"],
  "message show": ["org_id", "message_id"],
  "message erase": ["org_id", "message_id"]
}

class UsageError extends Error {
  readonly hint: string | undefined
  constructor(message: string, hint?: string) {
    super(message)
    this.hint = hint
  }
}

const isCommandName = (s: string): s is CommandName => (commandNames as ReadonlyArray<string>).includes(s)

const parseBoolean = (option: string, value: string, hint: string): boolean => {
  if (value === "true") return true
  if (value === "false") return false
  throw new UsageError(`--${option} must be true or false, not '${value}'`, hint)
}

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/

const isCalendarDate = (s: string): boolean => {
  const m = datePattern.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const date = new Date(Date.UTC(y, mo - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d
}

const parsePermissions = (values: ReadonlyArray<string>, hint: string): ReadonlyArray<PermissionName> => {
  const names = values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "")
  if (names.length === 0) throw new UsageError("--permissions needs at least one permission", hint)
  const result: Array<PermissionName> = []
  for (const name of names) {
    const known = permissionNames.find((p) => p === name)
    if (known === undefined) {
      throw new UsageError(`unknown permission '${name}' (expected some of: ${permissionNames.join(", ")})`, hint)
    }
    if (!result.includes(known)) result.push(known)
  }
  return result
}

/** A friendlier line for the errors `parseArgs` throws. */
const parseArgsMessage = (error: unknown): string => {
  const code = (error as { code?: unknown }).code
  const message = error instanceof Error ? error.message : String(error)
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /'([^']+)'/.exec(message)?.[1]
    return option === undefined ? "unknown option" : `unknown option '${option}'`
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const option = /'(--?[^ ']+)/.exec(message)?.[1]
    if (option !== undefined && /argument missing|ambiguous/.test(message)) return `${option} needs a value`
    if (option !== undefined) return `${option} takes no value`
  }
  return message.split("\n")[0] ?? message
}

const toCommand = (
  name: CommandName,
  args: ReadonlyArray<string>,
  values: Values
): Command => {
  const hint = commandUsage(name)
  const allowed = new Set<OptionName>([...globalOptions, ...commandOptions[name]])
  for (const option of Object.keys(values) as Array<OptionName>) {
    if (!allowed.has(option)) throw new UsageError(`option --${option} does not apply to '${name}'`, hint)
  }
  const expected = commandArguments[name]
  if (args.length < expected.length) {
    throw new UsageError(`'${name}' needs <${expected[args.length]}>`, hint)
  }
  if (args.length > expected.length) {
    const extra = args.slice(expected.length).map((a) => `'${a}'`).join(" ")
    throw new UsageError(`'${name}' takes ${expected.length} argument${expected.length === 1 ? "" : "s"}; unexpected ${extra}`, hint)
  }
  for (const [i, arg] of args.entries()) {
    if (arg.trim() === "") throw new UsageError(`<${expected[i]}> must not be empty`, hint)
  }
  const str = (option: "sender" | "sms-enabled" | "valid-until" | "active"): string | undefined => values[option]
  const a0 = args[0]!
  switch (name) {
    case "org create": {
      const sender = str("sender")
      return { name, orgName: a0, ...(sender === undefined ? {} : { sender }) }
    }
    case "org show":
    case "key revoke":
      return name === "org show" ? { name, orgId: a0 } : { name, keyId: a0 }
    case "org update": {
      const sender = str("sender")
      const smsEnabled = str("sms-enabled")
      if (sender === undefined && smsEnabled === undefined) {
        throw new UsageError("'org update' needs --sms-enabled or --sender (or both)", hint)
      }
      return {
        name,
        orgId: a0,
        ...(smsEnabled === undefined ? {} : { smsEnabled: parseBoolean("sms-enabled", smsEnabled, hint) }),
        ...(sender === undefined ? {} : { sender })
      }
    }
    case "key create": {
      const listed = values.permissions
      if (values.all === true && listed !== undefined) throw new UsageError("give --permissions or --all, not both", hint)
      if (values.all === true) return { name, orgId: a0, permissions: permissionNames }
      if (listed === undefined) throw new UsageError("'key create' needs --permissions P1,P2,... or --all", hint)
      return { name, orgId: a0, permissions: parsePermissions(listed, hint) }
    }
    case "credits grant": {
      const raw = args[1]!
      if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
        throw new UsageError(`<amount> must be a whole number of credits of at least 1, not '${raw}'`, hint)
      }
      const validUntil = str("valid-until")
      if (validUntil !== undefined && !isCalendarDate(validUntil)) {
        throw new UsageError(`--valid-until must be a date YYYY-MM-DD, not '${validUntil}'`, hint)
      }
      return { name, orgId: a0, amount: Number(raw), ...(validUntil === undefined ? {} : { validUntil }) }
    }
    case "sender set": {
      const active = str("active")
      if (active === undefined) throw new UsageError("'sender set' needs --active true|false", hint)
      return { name, orgId: a0, sender: args[1]!, active: parseBoolean("active", active, hint) }
    }
    case "message show":
    case "message erase":
      return { name, orgId: a0, messageId: args[1]! }
  }
}

const resolveSettings = (values: Values, env: Env): Settings => {
  const nonEmpty = (s: string | undefined) => (s === undefined || s.trim() === "" ? undefined : s.trim())
  const url = nonEmpty(values.url) ?? nonEmpty(env.SMS_ADMIN_URL) ?? defaultUrl
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--url must be an http(s) URL such as ${defaultUrl}, not '${url}'`)
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`--url must be an http(s) URL such as ${defaultUrl}, not '${url}'`)
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new UsageError(`--url must be a base URL without query or fragment, not '${url}'`)
  }
  const token = nonEmpty(values.token) ?? nonEmpty(env.SMS_ADMIN_TOKEN)
  if (token === undefined) {
    throw new UsageError("no operator token: pass --token TOKEN or set SMS_ADMIN_TOKEN (the server prints it when it starts)")
  }
  return { url: url.replace(/\/+$/, ""), token, json: values.json === true }
}

/** Parses the arguments after the program name; `env` supplies SMS_ADMIN_URL and SMS_ADMIN_TOKEN. */
export const parseCommandLine = (argv: ReadonlyArray<string>, env: Env): Parsed => {
  try {
    let parsed
    try {
      parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
    } catch (error) {
      throw new UsageError(parseArgsMessage(error))
    }
    const { values, positionals } = parsed
    if (values.help === true) return { kind: "help" }
    if (positionals.length === 0) throw new UsageError("no command given")
    const [group, action, ...args] = positionals
    const name = `${group} ${action ?? ""}`.trim()
    if (!isCommandName(name)) {
      const actions = commandNames.filter((c) => c.startsWith(`${group} `))
      throw new UsageError(
        actions.length === 0
          ? `unknown command '${group}'`
          : action === undefined
          ? `'${group}' needs one of: ${actions.map((c) => c.split(" ")[1]).join(", ")}`
          : `unknown command '${name}' (expected one of: ${actions.join(", ")})`
      )
    }
    const command = toCommand(name, args, values)
    return { kind: "run", settings: resolveSettings(values, env), command }
  } catch (error) {
    if (error instanceof UsageError) {
      return { kind: "usage-error", message: error.message, ...(error.hint === undefined ? {} : { hint: error.hint }) }
    }
    throw error
  }
}
