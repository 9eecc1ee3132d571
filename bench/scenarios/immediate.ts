/** Scenario 3: immediate sends to the zero-delay simulator (an ordinary number, no send_at). */
import { type BenchContext, jsonHeaders, messagesPath } from "../context.ts"
import { autocannonLoad, type LoadResult } from "../load.ts"

export const immediateSend = async (ctx: BenchContext): Promise<LoadResult> => {
  const { connections, durationS, warmupS } = ctx.settings
  const request = (tag: string) => ({
    method: "POST" as const,
    path: messagesPath,
    headers: jsonHeaders(ctx.org),
    body: JSON.stringify({ to: "+261331234567", text: "Bench immediate message" }),
    uniqueKeyPrefix: `${ctx.runId}-${tag}`
  })
  await autocannonLoad({
    base: ctx.service.base,
    connections,
    durationS: warmupS,
    request: request("s3warmup"),
    expectedStatus: 201
  })
  return autocannonLoad({ base: ctx.service.base, connections, durationS, request: request("s3"), expectedStatus: 201 })
}
