/** What every scenario gets: the settings, the fresh database, the running service and its organisations. */
import type { BenchOrg } from "./admin.ts"
import type { LoadRequest } from "./load.ts"
import type { Service } from "./service.ts"
import type { Settings } from "./settings.ts"

export interface OrgWithLot extends BenchOrg {
  /** Its one credit lot (pgbench scripts and seeding name it). */
  readonly lot: string
}

export interface BenchContext {
  readonly settings: Settings
  /** The fresh database the service and pgbench share. */
  readonly url: string
  readonly service: Service
  /** The organisation the HTTP load uses. */
  readonly org: OrgWithLot
  /** The organisation the pgbench scripts use (same schema, same tables, no interference). */
  readonly pgOrg: OrgWithLot
  /** The organisation whose due messages are drained. */
  readonly drainOrg: OrgWithLot
  /** A run-unique prefix for Idempotency-Keys. */
  readonly runId: string
}

export const pgVars = (org: OrgWithLot) => ({ org: org.id, keyid: org.keyId, lot: org.lot })

export const jsonHeaders = (org: BenchOrg): Record<string, string> => ({
  authorization: `Bearer ${org.apiKey}`,
  "content-type": "application/json"
})

export const messagesPath = "/api/sms/v2/messages/"
export const batchesPath = "/api/sms/v2/message-batches/"

/** The recipient of the scheduled single messages, unless a scenario gives others. */
export const benchRecipient = "+261331234567"

const scheduledBody = (to: string) =>
  JSON.stringify({ to, text: "Bench scheduled message", send_at: "2099-01-01T00:00:00Z" })

/**
 * A scheduled single message far in the future, a new key per request, to `benchRecipient` or,
 * when `recipients` are given, to each of them in turn.
 */
export const scheduledRequest = (ctx: BenchContext, tag: string, recipients?: ReadonlyArray<string>): LoadRequest => ({
  method: "POST",
  path: messagesPath,
  headers: jsonHeaders(ctx.org),
  body: scheduledBody(benchRecipient),
  ...(recipients === undefined ? {} : { bodies: recipients.map(scheduledBody) }),
  uniqueKeyPrefix: `${ctx.runId}-${tag}`
})
