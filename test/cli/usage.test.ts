/**
 * sms-admin's command line itself: `--help` lists every command, usage errors exit 64 with the
 * command's usage on stderr, and nothing reaches the service when the command line is wrong.
 */
import { Effect } from "effect"
import { HttpClient } from "effect/http"
import { Layer } from "effect"
import { describe, expect, it } from "vitest"
import { smsAdmin } from "../../src/admin/cli/Commands.ts"
import { runIn } from "./support.ts"

/** An HttpClient that fails the test if a usage error ever made a call. */
const noCalls = Layer.succeed(
  HttpClient.HttpClient,
  HttpClient.make((request) => Effect.die(new Error(`unexpected call to ${request.url}`)))
)

const cli = (argv: ReadonlyArray<string>, env: Record<string, string> = { SMS_ADMIN_TOKEN: "tok" }) =>
  runIn(noCalls, argv, env)

/** Every command, as an operator types it. */
const everyCommand = [
  "org create",
  "org show",
  "org update",
  "org list",
  "key create",
  "key revoke",
  "key list",
  "credits grant",
  "sender set",
  "sender list",
  "message show",
  "message erase",
  "message verify",
  "webhook list",
  "webhook disable",
  "inbound assign",
  "inbound remove",
  "inbound numbers",
  "inbound messages",
  "clock show",
  "clock advance"
]

describe("sms-admin usage", () => {
  it("lists every command in --help, on stdout, exit 0, with or without a token", async () => {
    const tree = smsAdmin.subcommands
      .flatMap((g) => g.commands)
      .flatMap((group) => group.subcommands.flatMap((s) => s.commands).map((c) => `${group.name} ${c.name}`))
    expect(tree).toEqual(everyCommand)
    for (const argv of [["--help"], ["-h"], ["org", "create", "-h"]]) {
      const help = await cli(argv, {})
      expect(help).toMatchObject({ code: 0, stderr: "" })
    }
    const help = await cli(["--help"], {})
    for (const command of everyCommand) expect(help.stdout).toMatch(new RegExp(`^  ${command} +\\S`, "m"))
    for (const flag of ["--url", "--token", "--json", "--help"]) expect(help.stdout).toContain(flag)
  })

  it("prints a command's own help with its arguments and flags", async () => {
    const help = await cli(["credits", "grant", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("sms-admin credits grant [flags] <org_id> <amount>")
    expect(help.stdout).toContain("--valid-until YYYY-MM-DD")
  })

  it("prints the help on stderr with exit 64 for an incomplete command line", async () => {
    const nothing = await cli([])
    expect(nothing).toMatchObject({ code: 64, stdout: "" })
    expect(nothing.stderr).toMatch(/^ {2}org create +\S/m)
    // the shared flags are checked first: without a token, that is what a bare command line hears about
    const noToken = await cli([], {})
    expect(noToken).toMatchObject({ code: 64, stdout: "" })
    expect(noToken.stderr).toMatch(
      /^error: no operator token: .*\nusage: sms-admin <subcommand> \[flags\]\nRun 'sms-admin --help'/
    )
    const group = await cli(["org"])
    expect(group).toMatchObject({ code: 64, stdout: "" })
    expect(group.stderr).toContain("sms-admin org <subcommand>")
  })

  it("exits 64 with the error, the usage line and where to read more", async () => {
    const missing = await cli(["credits", "grant", "o1"])
    expect(missing).toEqual({
      code: 64,
      stdout: "",
      stderr:
        "error: Missing required argument: amount\nusage: sms-admin credits grant [flags] <org_id> <amount>\n" +
        "Run 'sms-admin credits grant --help' for its arguments and flags.\n"
    })
  })

  it.each([
    [["frobnicate"], /Unknown subcommand "frobnicate"/],
    [["org", "delete", "o1"], /Unknown subcommand "delete" for "sms-admin org"/],
    [["org", "create"], /Missing required argument: name/],
    [["org", "create", "Acme", "Corp"], /Unexpected positional argument: "Corp"/],
    [["org", "create", ""], /Invalid value for argument <name>/],
    [["org", "create", "Acme", "--sender", "BAD!"], /--sender: "BAD!"/],
    [["org", "show"], /Missing required argument: org_id/],
    [["org", "update", "o1"], /'org update' needs --sms-enabled, --sender or --retention-days/],
    [["org", "update", "o1", "--retention-days", "0"], /--retention-days: "0"/],
    [["org", "update", "o1", "--retention-days", "forever"], /--retention-days: "forever"/],
    [["org", "update", "o1", "--sms-enabled", "maybe"], /--sms-enabled: "maybe"/],
    [["org", "list", "--limit", "101"], /--limit: "101"/],
    [["org", "list", "--limit", "0"], /--limit: "0"/],
    [["key", "create", "o1"], /needs --permissions P1,P2,\.\.\. or --all/],
    [["key", "create", "o1", "--all", "--permissions", "sms.send"], /not both/],
    [["key", "create", "o1", "--permissions", "sms.fly"], /unknown permission 'sms\.fly'/],
    [["key", "create", "o1", "--permissions", ","], /needs --permissions/],
    [["credits", "grant", "o1", "0"], /<amount>: "0"/],
    [["credits", "grant", "o1", "1.5"], /<amount>: "1\.5"/],
    [["credits", "grant", "o1", "ten"], /<amount>: "ten"/],
    [["credits", "grant", "o1", "10", "--valid-until", "2030-02-30"], /--valid-until: "2030-02-30"/],
    [["sender", "set", "o1", "SHOP"], /Missing required flag: --active/],
    [["sender", "set", "o1", "SHOP", "--active", "yes"], /--active: "yes"/],
    [["message", "show"], /Missing required argument: message_id/],
    [["message", "erase", "o1"], /Missing required argument: message_id/],
    [["message", "verify", "o1"], /Missing required argument: message_id/],
    [["org", "show", "o1", "--bogus"], /Unrecognized flag: --bogus/],
    [["org", "show", "o1", "--url", "ftp://x"], /--url must be an http\(s\) URL/],
    [["org", "show", "o1", "--url", "nonsense"], /--url must be an http\(s\) URL/],
    [["org", "show", "o1", "--url", "http://h/?q=1"], /--url must be a base URL without query or fragment/]
  ])("exits 64 for %j", async (argv, message) => {
    const result = await cli(argv)
    expect(result.code, result.stderr).toBe(64)
    expect(result.stdout).toBe("")
    expect(result.stderr).toMatch(message)
  })

  it("asks for the token when neither --token nor SMS_ADMIN_TOKEN gives one", async () => {
    for (const env of [{}, { SMS_ADMIN_TOKEN: "  " }]) {
      const result = await cli(["org", "show", "o1"], env)
      expect(result.code).toBe(64)
      expect(result.stderr).toMatch(/^error: no operator token: pass --token TOKEN or set SMS_ADMIN_TOKEN/)
    }
  })
})
