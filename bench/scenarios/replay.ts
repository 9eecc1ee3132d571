/** Scenario 4: idempotent replay of a stored answer (same key, same body, every request). */
import { type BenchContext, jsonHeaders, messagesPath } from "../context.ts"
import { autocannonLoad, type LoadResult } from "../load.ts"

export const replay = async (ctx: BenchContext): Promise<LoadResult> => {
  const { connections, durationS, warmupS } = ctx.settings
  const request = {
    method: "POST" as const,
    path: messagesPath,
    headers: { ...jsonHeaders(ctx.org), "idempotency-key": `${ctx.runId}-replay` },
    body: JSON.stringify({ to: "+261331234567", text: "Bench replayed message", send_at: "2099-01-01T00:00:00Z" })
  }
  const first = await fetch(`${ctx.service.base}${request.path}`, {
    method: "POST",
    headers: request.headers,
    body: request.body
  })
  if (first.status !== 202) throw new Error(`replay setup: expected 202, got ${first.status} ${await first.text()}`)
  await autocannonLoad({ base: ctx.service.base, connections, durationS: warmupS, request, expectedStatus: 202 })
  return autocannonLoad({ base: ctx.service.base, connections, durationS, request, expectedStatus: 202 })
}
