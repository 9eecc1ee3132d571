/** The small part of autocannon (untyped package) that bench/load.ts uses. */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  export interface RawRequest {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
  }

  export interface Request extends RawRequest {
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest
  }

  export interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
    overallRate?: number
    timeout?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: Array<Request>
  }

  export interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p90: number
    p99: number
    p99_9: number
  }

  export interface Result {
    duration: number
    requests: Histogram & { total: number; sent: number }
    latency: Histogram
    errors: number
    timeouts: number
    non2xx: number
    "1xx": number
    "2xx": number
    "3xx": number
    "4xx": number
    "5xx": number
    statusCodeStats: Record<string, { count: number }>
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop: () => void
  }

  function autocannon(options: Options): Instance
  export default autocannon
}
