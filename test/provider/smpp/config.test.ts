/** The SMPP variables: one SMSC by URL, several by the routing file, each problem one line naming its variable, passwords never echoed. */
import { Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { decodeSmppSettings } from "../../../src/config/SmppConfig.ts"
import type { SmppSettings } from "../../../src/config/SmppSettings.ts"
import { decodeEnv, readEnv } from "../../support/ConfigEnv.ts"

const noFile = (path: string): string => {
  throw Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" })
}
const file =
  (json: unknown) =>
  (path: string): string => {
    expect(path).toBe("/etc/sms/providers.json")
    return typeof json === "string" ? json : JSON.stringify(json)
  }
const settings = (env: Record<string, string>, provider: "simulator" | "smpp", readText: (path: string) => string) =>
  readEnv(decodeSmppSettings(provider, readText), env)
const smpp = (env: Record<string, string>, readText: (path: string) => string = noFile) =>
  settings(env, "smpp", readText)
const errorsOf = (decoded: ReturnType<typeof smpp>): ReadonlyArray<string> =>
  decoded.ok ? expect.fail("decoded") : decoded.errors
const settingsOf = (decoded: ReturnType<typeof smpp>): SmppSettings =>
  decoded.ok && decoded.value !== undefined ? decoded.value : expect.fail(JSON.stringify(decoded))

const readme = [
  {
    name: "telma",
    smpp_url: "smpp://aggregator:Tl-pass@smsc.telma.example:2775",
    prefixes: ["+26134", "+26138"],
    window: 20,
    mps: 100,
    binds: 2
  },
  {
    name: "orange",
    smpp_url: "smpp://aggregator:Or-pass@smsc.orange.example:2775",
    prefixes: ["+26132", "+26137"],
    msg_id_type: "hex_resp_dec_receipt"
  },
  { name: "airtel", smpp_url: "smpp://aggregator:Ai-pass@smsc.airtel.example:2776", prefixes: ["+26133"] },
  { name: "blueline", smpp_url: "smpp://aggregator:Bl-pass@smsc.blueline.example", prefixes: ["+26139"] }
]

describe("one SMSC by SMS_SMPP_URL", () => {
  it("gives one route serving every number, with the defaults of section 1", () => {
    const s = settingsOf(smpp({ SMS_SMPP_URL: "smpp://sim:p%40ss@127.0.0.1:2775" }))
    expect(s.responseTimeoutMs).toBe(10_000)
    expect(s.timing.enquireLinkIntervalMs).toBe(30_000)
    expect(s.routes).toHaveLength(1)
    const { endpoint, ...route } = s.routes[0]!
    expect(route).toEqual({ name: "smsc", prefixes: ["*"], window: 10, mps: 0, binds: 1, msgIdType: "exact" })
    expect({ ...endpoint, password: Redacted.value(endpoint.password) }).toEqual({
      host: "127.0.0.1",
      port: 2775,
      systemId: "sim",
      password: "p@ss"
    })
    expect(String(endpoint.password)).not.toContain("p@ss")
  })

  it("reads the tuning variables", () => {
    const s = settingsOf(
      smpp({
        SMS_SMPP_URL: "smpp://sim:sim@smsc",
        SMS_SMPP_RESPONSE_TIMEOUT_MS: "5000",
        SMS_SMPP_WINDOW: "50",
        SMS_SMPP_MPS: "200",
        SMS_SMPP_BINDS: "3",
        SMS_SMPP_MSG_ID_TYPE: "dec_resp_hex_receipt"
      })
    )
    expect(s.responseTimeoutMs).toBe(5000)
    expect(s.routes[0]).toMatchObject({
      window: 50,
      mps: 200,
      binds: 3,
      msgIdType: "dec_resp_hex_receipt",
      endpoint: { port: 2775 }
    })
  })

  it.each([
    [
      "http://sim:sim@host:2775",
      "SMS_SMPP_URL must be smpp://<system_id>:<password>@<host>:<port> (only the smpp scheme is supported)"
    ],
    ["smpp://host:2775", "SMS_SMPP_URL must be smpp://<system_id>:<password>@<host>:<port> (the system_id is missing)"],
    [
      "smpp://sim:secret@host:2775/x",
      "SMS_SMPP_URL must be smpp://<system_id>:<password>@<host>:<port> (nothing may follow the port)"
    ],
    ["smpp://sim:secret@host:99999", "SMS_SMPP_URL must be smpp://<system_id>:<password>@<host>:<port>"],
    ["not a url secret", "SMS_SMPP_URL must be smpp://<system_id>:<password>@<host>:<port>"]
  ])("refuses %s in one line without echoing it", (url, line) => {
    expect(errorsOf(smpp({ SMS_SMPP_URL: url }))).toEqual([line])
  })
})

describe("several SMSCs by SMS_PROVIDERS_FILE", () => {
  it("reads the README's example: routes, their settings and the defaults for what an entry leaves out", () => {
    const s = settingsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json", SMS_SMPP_WINDOW: "5" }, file(readme)))
    expect(
      s.routes.map((r) => [r.name, r.endpoint.host, r.endpoint.port, r.prefixes, r.window, r.mps, r.binds, r.msgIdType])
    ).toEqual([
      ["telma", "smsc.telma.example", 2775, ["+26134", "+26138"], 20, 100, 2, "exact"],
      ["orange", "smsc.orange.example", 2775, ["+26132", "+26137"], 5, 0, 1, "hex_resp_dec_receipt"],
      ["airtel", "smsc.airtel.example", 2776, ["+26133"], 5, 0, 1, "exact"],
      ["blueline", "smsc.blueline.example", 2775, ["+26139"], 5, 0, 1, "exact"]
    ])
  })

  it("says what is wrong with each entry, one line each, naming the variable and never a password", () => {
    const bad = [
      { name: "Telma", smpp_url: "smpp://u:hunter2@h:1", prefixes: ["26134"], window: 0, extra: true },
      { name: "orange", smpp_url: "ftp://u:hunter2@h", prefixes: ["+26132"] },
      { name: "orange", smpp_url: "smpp://u:hunter2@h", prefixes: ["+26132", "*"], msg_id_type: "octal", binds: 0 },
      { smpp_url: "smpp://u:p@h", prefixes: [] }
    ]
    const errors = errorsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json" }, file(bad)))
    expect(errors).toEqual([
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 1 (Telma) extra: is not a known field",
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 1 (Telma) name: must be 1 to 32 lower-case letters, digits, - or _",
      'SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 1 (Telma) prefixes.0: must be "*" or "+" followed by digits',
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 1 (Telma) window: expected a value between 1 and 1000",
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 3 (orange) binds: expected a value between 1 and 100",
      'SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 3 (orange) msg_id_type: expected "exact" | "hex_resp_dec_receipt" | "dec_resp_hex_receipt"',
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 4 name: is required",
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 4 prefixes: must list at least one prefix"
    ])
    for (const line of errors) expect(line).not.toContain("hunter2")
  })

  it("refuses entries that decode but contradict each other or carry a bad URL", () => {
    const bad = [
      { name: "telma", smpp_url: "smpp://u:p@h", prefixes: ["+26134"] },
      { name: "telma", smpp_url: "smpp://u:p@h2", prefixes: ["+26134", "+26138"] },
      { name: "orange", smpp_url: "smpp://u:hunter2@h/path", prefixes: ["+26132"] }
    ]
    expect(errorsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json" }, file(bad)))).toEqual([
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 2 (telma) name: already used by another entry",
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 2 (telma) prefixes: +26134 is already served by telma",
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): entry 3 (orange) smpp_url: must be smpp://<system_id>:<password>@<host>:<port> (nothing may follow the port)"
    ])
  })

  it("says when the file cannot be read, is not JSON (without quoting it) or is empty", () => {
    expect(errorsOf(smpp({ SMS_PROVIDERS_FILE: "/nope.json" }))).toEqual([
      "SMS_PROVIDERS_FILE cannot be read (/nope.json): ENOENT"
    ])
    expect(
      errorsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json" }, file('[{"smpp_url": smpp://u:hunter2@h}]')))
    ).toEqual(["SMS_PROVIDERS_FILE (/etc/sms/providers.json): the file: is not JSON"])
    expect(errorsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json" }, file('[{"a":1 "b"}]')))).toEqual([
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): the file: is not JSON (position 8)"
    ])
    expect(errorsOf(smpp({ SMS_PROVIDERS_FILE: "/etc/sms/providers.json" }, file([])))).toEqual([
      "SMS_PROVIDERS_FILE (/etc/sms/providers.json): the file: must list at least one SMSC"
    ])
  })
})

describe("combinations", () => {
  it("needs a URL or a file with SMS_PROVIDER=smpp, and not both", () => {
    expect(errorsOf(smpp({}))).toEqual([
      "SMS_PROVIDER=smpp needs SMS_SMPP_URL (one SMSC) or SMS_PROVIDERS_FILE (several)"
    ])
    expect(errorsOf(smpp({ SMS_SMPP_URL: "smpp://a:b@c", SMS_PROVIDERS_FILE: "/x" }))).toEqual([
      "SMS_SMPP_URL and SMS_PROVIDERS_FILE exclude each other: set only one"
    ])
  })

  it("refuses a URL or a file with the simulator, and checks the tuning variables whatever the provider", () => {
    expect(settings({}, "simulator", noFile)).toEqual({ ok: true, value: undefined })
    expect(settings({ SMS_SMPP_WINDOW: "20" }, "simulator", noFile)).toEqual({ ok: true, value: undefined })
    expect(errorsOf(settings({ SMS_SMPP_URL: "smpp://a:b@c" }, "simulator", noFile))).toEqual([
      "SMS_SMPP_URL is set but SMS_PROVIDER is simulator: set SMS_PROVIDER=smpp to send through SMPP, or unset SMS_SMPP_URL"
    ])
    expect(errorsOf(settings({ SMS_PROVIDERS_FILE: "/x", SMS_SMPP_MPS: "-1" }, "simulator", noFile))).toEqual([
      'SMS_SMPP_MPS must be an integer from 0 to 100000 (got "-1")',
      "SMS_PROVIDERS_FILE is set but SMS_PROVIDER is simulator: set SMS_PROVIDER=smpp to send through SMPP, or unset SMS_PROVIDERS_FILE"
    ])
  })

  it("names each bad tuning variable", () => {
    expect(
      errorsOf(
        smpp({
          SMS_SMPP_URL: "smpp://a:b@c",
          SMS_SMPP_RESPONSE_TIMEOUT_MS: "10s",
          SMS_SMPP_WINDOW: "0",
          SMS_SMPP_MPS: "x",
          SMS_SMPP_MSG_ID_TYPE: "hex"
        })
      ).map((line) => line.split(" ")[0])
    ).toEqual(["SMS_SMPP_RESPONSE_TIMEOUT_MS", "SMS_SMPP_WINDOW", "SMS_SMPP_MPS", "SMS_SMPP_MSG_ID_TYPE"])
  })
})

describe("the service's configuration", () => {
  it("carries the SMPP settings with SMS_PROVIDER=smpp", () => {
    const decoded = decodeEnv({ SMS_PROVIDER: "smpp", SMS_SMPP_URL: "smpp://sim:sim@smsc:2775" })
    expect(decoded.ok).toBe(true)
    if (!decoded.ok) return
    expect(decoded.config.provider).toBe("smpp")
    expect(decoded.config.smpp?.routes.map((r) => r.endpoint.host)).toEqual(["smsc"])
  })

  it("has no SMPP settings with the simulator", () => {
    const decoded = decodeEnv({})
    expect(decoded.ok && decoded.config.smpp).toBeUndefined()
  })

  it("stops the start with one line per problem, beside the other variables' lines", () => {
    const decoded = decodeEnv({ PORT: "x", SMS_PROVIDER: "smpp" }, noFile)
    expect(decoded.ok).toBe(false)
    if (decoded.ok) return
    expect(decoded.errors).toEqual([
      'PORT must be an integer from 1 to 65535 (got "x")',
      "SMS_PROVIDER=smpp needs SMS_SMPP_URL (one SMSC) or SMS_PROVIDERS_FILE (several)"
    ])
  })

  it("reads the routing file from disk by default", () => {
    const decoded = decodeEnv({ SMS_PROVIDER: "smpp", SMS_PROVIDERS_FILE: "/definitely/not/here.json" })
    expect(decoded.ok ? [] : decoded.errors).toEqual([
      "SMS_PROVIDERS_FILE cannot be read (/definitely/not/here.json): ENOENT"
    ])
  })
})
