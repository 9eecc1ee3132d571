/**
 * The OneAPI simulator as a process: `npm run oneapi`, or `node_modules/.bin/node
 * simulator/oneapi/main.ts` so that signals reach it (docs/operators.md#the-oneapi-simulator).
 * Serves OneAPI SMS over HTTP on SMS_ONEAPI_HOST:SMS_ONEAPI_PORT (127.0.0.1:2777) for the client
 * SMS_ONEAPI_CLIENT_ID / SMS_ONEAPI_CLIENT_SECRET (sim / sim), keeps what it owes in
 * SMS_ONEAPI_DATA_DIR (./.data/oneapi), takes inbound messages to send on the same port
 * (Control.ts), logs JSON lines on stdout, stops on SIGTERM / SIGINT, and under npm also when npm
 * is gone. A bad variable or a data directory in use stops the start with one line.
 */
import { Effect } from "effect"
import { every, integer, present, printLines, refuse, text } from "../../src/config/EnvFields.ts"
import { whenParentGone } from "../../src/platform/ParentWatch.ts"
import { loggableUrl } from "./Notifications.ts"
import { OneApiSim } from "./OneApiSim.ts"

const httpUrl = (name: string) =>
  Effect.flatMap(present(name), (raw) => {
    if (raw === undefined) return Effect.succeed(undefined)
    try {
      if (["http:", "https:"].includes(new URL(raw).protocol)) return Effect.succeed(raw)
    } catch {
      // refused below
    }
    return refuse(`${name} must be an http or https URL (got "${raw}")`)
  })

const settings = await Effect.runPromise(
  every({
    host: text("SMS_ONEAPI_HOST", "127.0.0.1"),
    port: integer("SMS_ONEAPI_PORT", 2777, 1, 65535),
    clientId: text("SMS_ONEAPI_CLIENT_ID", "sim"),
    clientSecret: text("SMS_ONEAPI_CLIENT_SECRET", "sim"),
    tokenTtlS: integer("SMS_ONEAPI_TOKEN_TTL_S", 3600, 1, 31_536_000),
    receiptDelayMs: integer("SMS_SIMULATOR_RECEIPT_DELAY_MS", 2000, 0, 86_400_000),
    slowMs: integer("SMS_SIMULATOR_SLOW_MS", 3000, 0, 600_000),
    lateMs: integer("SMS_ONEAPI_LATE_MS", 12_000, 0, 600_000),
    responseDelayMs: integer("SMS_ONEAPI_RESPONSE_DELAY_MS", 0, 0, 600_000),
    receiptRetryMs: integer("SMS_ONEAPI_RECEIPT_RETRY_MS", 5000, 1, 600_000),
    inboundNotifyUrl: httpUrl("SMS_ONEAPI_INBOUND_NOTIFY_URL"),
    dataDir: text("SMS_ONEAPI_DATA_DIR", "./.data/oneapi")
  }).pipe(Effect.tapError(printLines))
).catch(() => process.exit(1))

const log = (message: string, fields: Readonly<Record<string, string | number>> = {}): void => {
  process.stdout.write(
    `${JSON.stringify({ message, level: "INFO", timestamp: new Date().toISOString(), ...fields })}\n`
  )
}

const { inboundNotifyUrl, responseDelayMs, ...options } = settings
const sim = await OneApiSim.start({
  ...options,
  ...(inboundNotifyUrl === undefined ? {} : { inboundNotifyUrl }),
  log
}).catch((e: unknown) => {
  process.stderr.write(`OneAPI simulator not started: ${e instanceof Error ? e.message : String(e)}\n`)
  return process.exit(1)
})
sim.responseDelayMs = responseDelayMs
log("OneAPI simulator listening", {
  host: settings.host,
  port: sim.port,
  client_id: settings.clientId,
  token_url: sim.tokenUrl,
  data_dir: settings.dataDir,
  inbound_notify_url: inboundNotifyUrl === undefined ? "" : loggableUrl(inboundNotifyUrl),
  receipts_owed: sim.receiptsOwed,
  correlators_known: sim.correlatorsKnown
})

let stopping = false
const shutdown = (): void => {
  if (stopping) return
  stopping = true
  log("OneAPI simulator stopping", {
    sent: sim.sent.length,
    requests: sim.requests.length,
    tokens_issued: sim.tokensIssued,
    receipts_posted: sim.receiptsPosted,
    receipts_owed: sim.receiptsOwed
  })
  void sim.dispose().then(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
if (process.env.npm_lifecycle_event === "oneapi") {
  whenParentGone(() => {
    log("OneAPI simulator: npm is gone")
    shutdown()
  })
}
