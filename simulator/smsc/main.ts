/**
 * The SMSC simulator as a process: `npm run smsc`, or `node_modules/.bin/node simulator/smsc/main.ts`
 * so that signals reach it. Serves SMPP 3.4 on SMS_SMSC_HOST:SMS_SMSC_PORT (127.0.0.1:2775) for the
 * account SMS_SMSC_SYSTEM_ID / SMS_SMSC_PASSWORD (sim / sim), keeps what it owes in
 * SMS_SMSC_DATA_DIR (./.data/smsc) with what it counted (stats.json: binds per account at once,
 * submissions per second; Stats.ts), takes MO to send on 127.0.0.1:SMS_SMSC_CONTROL_PORT (2776, 0
 * for none; Control.ts), logs JSON lines on stdout, stops on SIGTERM / SIGINT, and
 * under npm also when npm is gone. A bad variable or a data directory in use stops the start
 * with one line.
 */
import { Effect } from "effect"
import { every, integer, oneOf, printLines, text } from "../../src/config/EnvFields.ts"
import { msgIdTypes } from "../../src/config/SmppSettings.ts"
import { whenParentGone } from "../../src/platform/ParentWatch.ts"
import { serveControl } from "./Control.ts"
import { Smsc } from "./Smsc.ts"

const settings = await Effect.runPromise(
  every({
    host: text("SMS_SMSC_HOST", "127.0.0.1"),
    port: integer("SMS_SMSC_PORT", 2775, 1, 65535),
    systemId: text("SMS_SMSC_SYSTEM_ID", "sim"),
    password: text("SMS_SMSC_PASSWORD", "sim"),
    lateMs: integer("SMS_SMSC_LATE_MS", 12_000, 0, 600_000),
    responseDelayMs: integer("SMS_SMSC_RESPONSE_DELAY_MS", 0, 0, 600_000),
    receiptDelayMs: integer("SMS_SIMULATOR_RECEIPT_DELAY_MS", 2000, 0, 86_400_000),
    slowMs: integer("SMS_SIMULATOR_SLOW_MS", 3000, 0, 600_000),
    idFormat: oneOf("SMS_SMSC_MSG_ID_TYPE", "exact", msgIdTypes),
    dataDir: text("SMS_SMSC_DATA_DIR", "./.data/smsc"),
    controlPort: integer("SMS_SMSC_CONTROL_PORT", 2776, 0, 65535)
  }).pipe(Effect.tapError(printLines))
).catch(() => process.exit(1))

const log = (message: string, fields: Readonly<Record<string, string | number>> = {}): void => {
  process.stdout.write(
    `${JSON.stringify({ message, level: "INFO", timestamp: new Date().toISOString(), ...fields })}\n`
  )
}

const { idFormat, responseDelayMs, controlPort, ...options } = settings
const smsc = await Smsc.start({ ...options, log }).catch((e: unknown) => {
  process.stderr.write(`SMSC simulator not started: ${e instanceof Error ? e.message : String(e)}\n`)
  return process.exit(1)
})
smsc.idFormat = idFormat
smsc.responseDelayMs = responseDelayMs
const control =
  controlPort === 0
    ? undefined
    : await serveControl(smsc, controlPort).catch((e: unknown) => {
        process.stderr.write(
          `SMSC simulator not started: control port ${controlPort}: ${e instanceof Error ? e.message : String(e)}\n`
        )
        return process.exit(1)
      })
log("SMSC simulator listening", {
  host: settings.host,
  port: smsc.port,
  system_id: settings.systemId,
  msg_id_type: smsc.idFormat,
  data_dir: settings.dataDir,
  receipts_owed: smsc.receiptsOwed,
  control_port: controlPort
})

let stopping = false
const shutdown = (): void => {
  if (stopping) return
  stopping = true
  const { binds, maxSubmitsPerSecond } = smsc.counts
  log("SMSC simulator stopping", {
    messages: smsc.messages.length,
    receipts_sent: smsc.receiptsSent,
    max_binds_at_once: Math.max(0, ...Object.values(binds).map((b) => b.max)),
    max_submits_per_second: maxSubmitsPerSecond
  })
  control?.close()
  void smsc.dispose().then(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
if (process.env.npm_lifecycle_event === "smsc") {
  whenParentGone(() => {
    log("SMSC simulator: npm is gone")
    shutdown()
  })
}
