/**
 * Scenario 10: the cost of monitoring. Scenario 1's load against a service process exporting its
 * traces over OTLP (to a local collector that accepts everything) while /metrics is scraped every
 * second; its req/s beside scenario 1's.
 */
import { createServer } from "node:http"
import type { BenchContext, OrgWithLot } from "../context.ts"
import { autocannonLoad, type LoadResult } from "../load.ts"
import { memorySampler, startService } from "../service.ts"
import { scheduledRequest } from "../context.ts"

export interface ObservabilityResult {
  readonly service: LoadResult
  /** Trace exports the collector received, and /metrics scrapes answered 200. */
  readonly exports: number
  readonly scrapes: number
}

/** Runs the observed load; the service's peak RSS goes to `memory` under the phase's name. */
export const observedAdmission = async (
  ctx: BenchContext,
  org: OrgWithLot,
  logDir: string,
  memory: Record<string, number>
): Promise<ObservabilityResult> => {
  let exports = 0
  const collector = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      if (req.url === "/v1/traces") exports++
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
  const address = collector.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  const service = await startService({
    databaseUrl: ctx.url,
    logDir,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, SMS_SCHEDULER_ENABLED: "false" }
  })
  const sampler = memorySampler(service.pid)
  let scrapes = 0
  const scraper = setInterval(() => {
    fetch(`${service.base}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } })
      .then((res) => {
        if (res.status === 200) scrapes++
        return res.text()
      })
      .catch(() => undefined)
  }, 1000)
  try {
    const observed = { ...ctx, service, org }
    const { connections, durationS, warmupS } = ctx.settings
    await autocannonLoad({
      base: service.base,
      connections,
      durationS: warmupS,
      request: scheduledRequest(observed, "o-warmup"),
      expectedStatus: 202
    })
    const load = await autocannonLoad({
      base: service.base,
      connections,
      durationS,
      request: scheduledRequest(observed, "s10"),
      expectedStatus: 202
    })
    return { service: load, exports, scrapes }
  } finally {
    clearInterval(scraper)
    memory["admission with tracing and metrics"] = sampler.stop()
    await service.stop()
    await new Promise((resolve) => collector.close(resolve))
  }
}
