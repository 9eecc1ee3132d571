import { describe, expect, it } from "vitest"
import { parseCommandLine } from "../../src/admin/cli/args.ts"
import { requestFor } from "../../src/admin/cli/client.ts"
import { commandNames, permissionNames, usageText } from "../../src/admin/cli/usage.ts"
import { Permissions } from "../../src/domain/Permissions.ts"

const env = { SMS_ADMIN_TOKEN: "tok" }
const parse = (line: string, e: Record<string, string | undefined> = env) => parseCommandLine(line.split(" ").filter((s) => s !== ""), e)

const commandOf = (line: string) => {
  const parsed = parse(line)
  if (parsed.kind !== "run") throw new Error(`expected a command, got ${JSON.stringify(parsed)}`)
  return parsed.command
}

const usageError = (line: string, e?: Record<string, string | undefined>) => {
  const parsed = parse(line, e)
  if (parsed.kind !== "usage-error") throw new Error(`expected a usage error, got ${JSON.stringify(parsed)}`)
  return parsed.message
}

describe("sms-admin argument parsing", () => {
  it("parses every command to its typed form and route", () => {
    const cases = [
      ["org create Acme", { name: "org create", orgName: "Acme" }, "POST /organizations", { name: "Acme" }],
      ["org create Acme --sender ACME", { name: "org create", orgName: "Acme", sender: "ACME" }, "POST /organizations", {
        name: "Acme",
        default_sender_name: "ACME"
      }],
      ["org show o1", { name: "org show", orgId: "o1" }, "GET /organizations/o1", undefined],
      ["org update o1 --sms-enabled false", { name: "org update", orgId: "o1", smsEnabled: false }, "PATCH /organizations/o1", {
        sms_enabled: false
      }],
      ["org update o1 --sender NEW --sms-enabled true", { name: "org update", orgId: "o1", smsEnabled: true, sender: "NEW" }, "PATCH /organizations/o1", {
        sms_enabled: true,
        default_sender_name: "NEW"
      }],
      ["key create o1 --permissions sms.send,balance.read", { name: "key create", orgId: "o1", permissions: ["sms.send", "balance.read"] }, "POST /organizations/o1/api-keys", {
        permissions: ["sms.send", "balance.read"]
      }],
      ["key create o1 --all", { name: "key create", orgId: "o1", permissions: [...permissionNames] }, "POST /organizations/o1/api-keys", {
        permissions: [...permissionNames]
      }],
      ["key revoke k1", { name: "key revoke", keyId: "k1" }, "POST /api-keys/k1/revoke", undefined],
      ["credits grant o1 1000", { name: "credits grant", orgId: "o1", amount: 1000 }, "POST /organizations/o1/credits", { amount: 1000 }],
      ["credits grant o1 5 --valid-until 2030-12-31", { name: "credits grant", orgId: "o1", amount: 5, validUntil: "2030-12-31" }, "POST /organizations/o1/credits", {
        amount: 5,
        valid_until: "2030-12-31"
      }],
      ["sender set o1 SHOP --active true", { name: "sender set", orgId: "o1", sender: "SHOP", active: true }, "PUT /organizations/o1/senders/SHOP", {
        active: true
      }],
      ["message show o1 m1", { name: "message show", orgId: "o1", messageId: "m1" }, "GET /organizations/o1/messages/m1", undefined],
      ["message erase o1 m1", { name: "message erase", orgId: "o1", messageId: "m1" }, "POST /organizations/o1/messages/m1/erasure", undefined]
    ] as const
    expect(new Set(cases.map(([, c]) => c.name))).toEqual(new Set(commandNames))
    for (const [line, command, route, body] of cases) {
      expect(commandOf(line), line).toEqual(command)
      const request = requestFor(commandOf(line))
      expect(`${request.method} ${request.path}`, line).toBe(route)
      expect(request.body, line).toEqual(body)
    }
  })

  it("encodes path segments", () => {
    expect(requestFor(commandOf("sender set o/1 MY --active false")).path).toBe("/organizations/o%2F1/senders/MY")
    const spaced = parseCommandLine(["sender", "set", "o1", "MY SHOP", "--active", "false"], env)
    expect(spaced.kind === "run" && requestFor(spaced.command).path).toBe("/organizations/o1/senders/MY%20SHOP")
  })

  it("accepts options anywhere, --opt=value, and repeated --permissions", () => {
    expect(commandOf("--json org show o1")).toEqual({ name: "org show", orgId: "o1" })
    expect(commandOf("credits grant --valid-until=2031-01-31 o1 7")).toEqual({
      name: "credits grant",
      orgId: "o1",
      amount: 7,
      validUntil: "2031-01-31"
    })
    expect(commandOf("key create o1 --permissions sms.send --permissions sms.send,contacts.manage")).toEqual({
      name: "key create",
      orgId: "o1",
      permissions: ["sms.send", "contacts.manage"]
    })
  })

  it("resolves url and token from options, then the environment, then the default", () => {
    const settings = (line: string, e: Record<string, string | undefined>) => {
      const parsed = parse(line, e)
      if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed))
      return parsed.settings
    }
    expect(settings("org show o1", { SMS_ADMIN_TOKEN: "t" })).toEqual({ url: "http://127.0.0.1:8080", token: "t", json: false })
    expect(settings("org show o1 --json", { SMS_ADMIN_TOKEN: "t", SMS_ADMIN_URL: "https://sms.example/base/" })).toEqual({
      url: "https://sms.example/base",
      token: "t",
      json: true
    })
    expect(settings("org show o1 --url http://h:1 --token mine", { SMS_ADMIN_TOKEN: "t", SMS_ADMIN_URL: "http://x" })).toEqual({
      url: "http://h:1",
      token: "mine",
      json: false
    })
  })

  it("asks for the token when neither --token nor SMS_ADMIN_TOKEN gives one", () => {
    expect(usageError("org show o1", {})).toMatch(/no operator token.*--token.*SMS_ADMIN_TOKEN/)
    expect(usageError("org show o1", { SMS_ADMIN_TOKEN: "  " })).toMatch(/no operator token/)
  })

  it("answers help for --help and -h, whatever else is given", () => {
    expect(parse("--help", {})).toEqual({ kind: "help" })
    expect(parse("org create -h", {})).toEqual({ kind: "help" })
    for (const name of commandNames) expect(usageText()).toContain(name)
  })

  it("refuses missing, extra or malformed arguments as usage errors", () => {
    const refused: ReadonlyArray<readonly [string, RegExp]> = [
      ["", /no command/],
      ["frobnicate", /unknown command 'frobnicate'/],
      ["org", /'org' needs one of: create, show, update/],
      ["org delete o1", /unknown command 'org delete'/],
      ["org create", /'org create' needs <name>/],
      ["org create Acme Corp", /unexpected 'Corp'/],
      ["org create Acme --sender", /--sender needs a value/],
      ["org show", /needs <org_id>/],
      ["org update", /needs <org_id>/],
      ["org update o1", /needs --sms-enabled or --sender/],
      ["org update o1 --sms-enabled maybe", /--sms-enabled must be true or false/],
      ["org show o1 --active true", /--active does not apply to 'org show'/],
      ["key create", /needs <org_id>/],
      ["key create o1", /needs --permissions .* or --all/],
      ["key create o1 --all --permissions sms.send", /not both/],
      ["key create o1 --permissions sms.fly", /unknown permission 'sms.fly'/],
      ["key create o1 --permissions ,", /at least one permission/],
      ["key revoke", /needs <key_id>/],
      ["credits grant o1", /needs <amount>/],
      ["credits grant o1 0", /at least 1/],
      ["credits grant o1 1.5", /whole number/],
      ["credits grant o1 ten", /whole number/],
      ["credits grant o1 10 --valid-until 2030-02-30", /--valid-until must be a date/],
      ["sender set o1", /needs <name>/],
      ["sender set o1 SHOP", /needs --active/],
      ["sender set o1 SHOP --active yes", /--active must be true or false/],
      ["message show o1", /needs <message_id>/],
      ["message erase o1", /needs <message_id>/],
      ["org show o1 --bogus", /unknown option '--bogus'/],
      ["org show o1 --json=yes", /--json takes no value/],
      ["org show o1 --url ftp://x", /--url must be an http\(s\) URL/],
      ["org show o1 --url nonsense", /--url must be an http\(s\) URL/]
    ]
    for (const [line, message] of refused) expect(usageError(line), line).toMatch(message)
    const parsed = parse("credits grant o1")
    expect(parsed.kind === "usage-error" && parsed.hint).toBe("usage: sms-admin credits grant <org_id> <amount> [--valid-until YYYY-MM-DD]")
  })

  it("knows the same five permissions as the service", () => {
    expect([...permissionNames]).toEqual([...Permissions])
  })
})
