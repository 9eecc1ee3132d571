/**
 * HTTP load against the service on 127.0.0.1 only: closed loop (and autocannon's own rate
 * limit) with autocannon, keep-alive, no pipelining; and a paced open-loop generator with Poisson
 * arrivals whose latency counts from each request's scheduled start, like `pgbench --rate`.
 */
import autocannon from "autocannon"
import { Agent, request as httpRequest } from "node:http"
import { setTimeout as sleep } from "node:timers/promises"
import { percentile, round } from "./stats.ts"

export interface LoadRequest {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
  /** Send a new `Idempotency-Key` (this prefix and a counter) with every request. */
  readonly uniqueKeyPrefix?: string
  /** Bodies taken in turn instead of `body`: the n-th request (from 1) sends `bodies[n % length]`. */
  readonly bodies?: ReadonlyArray<string>
}

/** The body of the n-th request (from 1). */
const bodyOf = (request: LoadRequest, n: number): string | undefined =>
  request.bodies === undefined || request.bodies.length === 0 ? request.body : request.bodies[n % request.bodies.length]

export interface LoadResult {
  readonly tool: "autocannon" | "paced"
  readonly connections: number
  readonly targetRate: number | null
  readonly durationS: number
  /** Responses with the expected status. */
  readonly ok: number
  readonly reqPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
  readonly statusCounts: Readonly<Record<string, number>>
  readonly errors: number
  /** autocannon's own p99 (whole ms; corrected for coordinated omission when rate-limited). */
  readonly autocannonP99Ms?: number
}

const assertLocal = (base: string) => {
  if (new URL(base).hostname !== "127.0.0.1") throw new Error(`load generation only targets 127.0.0.1, not ${base}`)
}

/** One answer: its status and its latency. */
export interface Sample {
  readonly status: number
  readonly ms: number
}

/** The figures of a load from its answers (exported to pool the answers of several runs). */
export const summarise = (
  tool: LoadResult["tool"],
  connections: number,
  targetRate: number | null,
  durationS: number,
  expected: number,
  samples: ReadonlyArray<Sample>,
  errors: number
): Omit<LoadResult, "autocannonP99Ms"> => {
  const statusCounts: Record<string, number> = {}
  const good: Array<number> = []
  for (const s of samples) {
    statusCounts[s.status] = (statusCounts[s.status] ?? 0) + 1
    if (s.status === expected) good.push(s.ms)
  }
  return {
    tool,
    connections,
    targetRate,
    durationS: round(durationS, 2),
    ok: good.length,
    reqPerSec: round(good.length / durationS, 1),
    p50Ms: round(percentile(good, 0.5), 2),
    p99Ms: round(percentile(good, 0.99), 2),
    meanMs: round(good.reduce((a, b) => a + b, 0) / Math.max(1, good.length), 2),
    statusCounts,
    errors
  }
}

/**
 * autocannon with `connections` keep-alive connections for `durationS` (optionally its
 * `overallRate`); every answer is also pushed to `samples` when given.
 */
export const autocannonLoad = async (options: {
  readonly base: string
  readonly connections: number
  readonly durationS: number
  readonly request: LoadRequest
  readonly expectedStatus: number
  readonly overallRate?: number
  readonly samples?: Array<Sample>
}): Promise<LoadResult> => {
  assertLocal(options.base)
  const { request } = options
  let counter = 0
  const prefix = request.uniqueKeyPrefix
  const bodies = request.bodies
  const instance = autocannon({
    url: options.base,
    connections: options.connections,
    pipelining: 1,
    duration: options.durationS,
    timeout: 30,
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
    requests: [
      {
        method: request.method,
        path: request.path,
        headers: { ...request.headers },
        ...(request.body !== undefined ? { body: request.body } : {}),
        ...(prefix !== undefined || bodies !== undefined
          ? {
              setupRequest: (req) => {
                const n = ++counter
                const body = bodyOf(request, n)
                return {
                  ...req,
                  headers:
                    prefix === undefined ? { ...req.headers } : { ...req.headers, "idempotency-key": `${prefix}-${n}` },
                  ...(body !== undefined ? { body } : {})
                }
              }
            }
          : {})
      }
    ]
  })
  const samples: Array<Sample> = []
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    samples.push({ status, ms })
    options.samples?.push({ status, ms })
  })
  const started = performance.now()
  const result = await instance
  const durationS = (performance.now() - started) / 1000
  return {
    ...summarise(
      "autocannon",
      options.connections,
      options.overallRate ?? null,
      durationS,
      options.expectedStatus,
      samples,
      result.errors + result.timeouts
    ),
    autocannonP99Ms: result.latency.p99
  }
}

/**
 * Open loop: requests start at Poisson-distributed times averaging `rate` per second, over at
 * most `connections` keep-alive sockets (a request waiting for a socket is still counted from
 * its scheduled start).
 */
export const pacedLoad = async (options: {
  readonly base: string
  readonly connections: number
  readonly durationS: number
  readonly rate: number
  readonly request: LoadRequest
  readonly expectedStatus: number
}): Promise<LoadResult> => {
  assertLocal(options.base)
  const { request } = options
  const url = new URL(options.base)
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections })
  const samples: Array<{ status: number; ms: number }> = []
  let errors = 0
  let counter = 0
  const inFlight = new Set<Promise<void>>()
  const fire = (scheduled: number) => {
    const headers: Record<string, string> = { ...request.headers }
    const n = ++counter
    if (request.uniqueKeyPrefix !== undefined) headers["idempotency-key"] = `${request.uniqueKeyPrefix}-${n}`
    const body = bodyOf(request, n)
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body))
    const done = new Promise<void>((resolve) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent },
        (res) => {
          res.resume()
          res.on("end", () => {
            samples.push({ status: res.statusCode ?? 0, ms: performance.now() - scheduled })
            resolve()
          })
        }
      )
      req.on("error", () => {
        errors++
        resolve()
      })
      req.end(body)
    })
    inFlight.add(done)
    void done.then(() => inFlight.delete(done))
  }
  const started = performance.now()
  const end = started + options.durationS * 1000
  let next = started
  while (next < end) {
    const now = performance.now()
    while (next <= now && next < end) {
      fire(next)
      next += (-Math.log(1 - Math.random()) / options.rate) * 1000
    }
    const wait = next - performance.now()
    if (wait > 1) await sleep(wait)
    else await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all([...inFlight])
  agent.destroy()
  return summarise(
    "paced",
    options.connections,
    options.rate,
    options.durationS,
    options.expectedStatus,
    samples,
    errors
  )
}
