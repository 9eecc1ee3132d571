/**
 * The SMSC simulator as a process: `npm run smsc`. Serves SMPP 3.4 on SMS_SMSC_HOST:SMS_SMSC_PORT
 * (127.0.0.1:2775) for the account SMS_SMSC_SYSTEM_ID / SMS_SMSC_PASSWORD (sim / sim), logs JSON
 * lines on stdout, stops on SIGTERM / SIGINT. A bad variable stops the start with one line.
 */
import { type Env, integer, oneOf, text, valueOf } from "../../src/EnvFields.ts"
import { msgIdTypes } from "../../src/provider/smpp/SmppSettings.ts"
import { Smsc } from "./Smsc.ts"

const env: Env = process.env
const fields = {
  host: text(env, "SMS_SMSC_HOST", "127.0.0.1"),
  port: integer(env, "SMS_SMSC_PORT", 2775, 1, 65535),
  systemId: text(env, "SMS_SMSC_SYSTEM_ID", "sim"),
  password: text(env, "SMS_SMSC_PASSWORD", "sim"),
  lateMs: integer(env, "SMS_SMSC_LATE_MS", 12_000, 0, 600_000),
  receiptDelayMs: integer(env, "SMS_SIMULATOR_RECEIPT_DELAY_MS", 2000, 0, 86_400_000),
  slowMs: integer(env, "SMS_SIMULATOR_SLOW_MS", 3000, 0, 600_000),
  idFormat: oneOf(env, "SMS_SMSC_MSG_ID_TYPE", "exact", msgIdTypes)
}
const errors = Object.values(fields).flatMap((f) => (f.ok ? [] : [f.line]))
if (errors.length > 0) {
  for (const line of errors) process.stderr.write(`configuration error: ${line}\n`)
  process.exit(1)
}

const log = (message: string, fields: Readonly<Record<string, string | number>> = {}): void => {
  process.stdout.write(`${JSON.stringify({ message, level: "INFO", timestamp: new Date().toISOString(), ...fields })}\n`)
}

const smsc = await Smsc.start({
  host: valueOf(fields.host),
  port: valueOf(fields.port),
  systemId: valueOf(fields.systemId),
  password: valueOf(fields.password),
  lateMs: valueOf(fields.lateMs),
  receiptDelayMs: valueOf(fields.receiptDelayMs),
  slowMs: valueOf(fields.slowMs),
  log
})
smsc.idFormat = valueOf(fields.idFormat)
log("SMSC simulator listening", { host: valueOf(fields.host), port: smsc.port, system_id: valueOf(fields.systemId), msg_id_type: smsc.idFormat })

const shutdown = (): void => {
  log("SMSC simulator stopping", { messages: smsc.messages.length, receipts_sent: smsc.receiptsSent })
  void smsc.dispose().then(() => process.exit(0))
}
process.once("SIGTERM", shutdown)
process.once("SIGINT", shutdown)
