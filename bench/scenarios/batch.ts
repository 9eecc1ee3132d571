/** Scenario 5: admission of batches of 1000 recipients over 2 connections, against pgbench of the batch SQL. */
import { batchesPath, type BenchContext, jsonHeaders, pgVars } from "../context.ts"
import { autocannonLoad, type LoadResult } from "../load.ts"
import { type PgbenchResult, runPgbench } from "../pgbench.ts"

export interface BatchResult {
  readonly size: number
  readonly pgbench: PgbenchResult
  readonly service: LoadResult
}

const recipient = (i: number) => `+26133${String(i).padStart(7, "0")}`

/** JSON without any colon directly followed by a name character (pgbench would take it for a variable). */
const pgbenchJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/(\d):(?=\d)/g, "$1\\u003a")
    .replaceAll('":', '": ')

/** The JSON documents the service sends for one batch; @@@@@@@@@@@@ is replaced per transaction. */
const pgbenchDocuments = (ctx: BenchContext, size: number) => {
  const tail = "-0000-4000-8000-@@@@@@@@@@@@"
  const messageId = (i: number) => `${i.toString(16).padStart(8, "0")}${tail}`
  const messages = Array.from({ length: size }, (_, k) => ({
    id: messageId(k + 1),
    batch_id: `b0000000${tail}`,
    batch_position: k + 1,
    to_number: recipient(k + 1),
    sender_name: "INFO",
    text: "Bench batch message",
    segments: 1,
    status: "scheduled",
    send_at: "2099-01-01T00:00:00.000Z"
  }))
  const holds = Array.from({ length: size }, (_, k) => ({
    organisation_id: ctx.pgOrg.id,
    message_id: messageId(k + 1),
    lot_id: ctx.pgOrg.lot,
    amount: 1
  }))
  return { SIZE: String(size), MESSAGES_JSON: pgbenchJson(messages), HOLDS_JSON: pgbenchJson(holds) }
}

export const batchAdmission = async (ctx: BenchContext): Promise<BatchResult> => {
  const { batchConnections, batchSize, durationS, warmupS } = ctx.settings
  const pgbench = await runPgbench({
    url: ctx.url,
    script: "batch",
    replacements: pgbenchDocuments(ctx, batchSize),
    vars: pgVars(ctx.pgOrg),
    clients: batchConnections,
    durationS
  })
  const request = (tag: string) => ({
    method: "POST" as const,
    path: batchesPath,
    headers: jsonHeaders(ctx.org),
    body: JSON.stringify({
      recipients: Array.from({ length: batchSize }, (_, k) => recipient(k + 1)),
      text: "Bench batch message",
      send_at: "2099-01-01T00:00:00Z"
    }),
    uniqueKeyPrefix: `${ctx.runId}-${tag}`
  })
  await autocannonLoad({
    base: ctx.service.base,
    connections: batchConnections,
    durationS: warmupS,
    request: request("s5warmup"),
    expectedStatus: 202
  })
  const service = await autocannonLoad({
    base: ctx.service.base,
    connections: batchConnections,
    durationS,
    request: request("s5"),
    expectedStatus: 202
  })
  return { size: batchSize, pgbench, service }
}
