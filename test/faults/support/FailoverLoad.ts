/**
 * The load of the failover tests: creations at a steady rate whatever the answers take (a
 * creation is sent every `1000 / ratePerSecond` ms, so an outage piles requests up rather than
 * slowing the clients down), each under its own Idempotency-Key and to destinations no other
 * request names, so that the SMSC simulator's journal tells which request's messages it took:
 * immediate sends, scheduled messages falling due 2 to 6 s later, and batches of five. Probes of
 * `/ready` run beside it. Every answer is kept with when it was sent and answered.
 */
import type { Served } from "../../support/ServedProcess.ts"
import { type Exchange, exchange, type Operation, perform, type Result } from "./Operations.ts"

/** Recipients of one batch. */
export const batchSize = 5
const oneSegment = "Failover test: your order has shipped."
const twoSegments = `Failover test, two segments: ${"0123456789".repeat(20)}`.slice(0, 200)

/** The `seq`-th destination of a run, `+26134<run digit><6 digits>`: none of the simulators' test numbers (those end in 00000n). */
export const destination = (runDigit: number, seq: number): string => `+26134${runDigit}${String(seq).padStart(6, "0")}`

/** The `i`-th creation of run `run` (its keys) with destinations of `runDigit`, its schedule relative to `now` (ms). */
export const failoverOperation = (run: string, runDigit: number, i: number, now: number): Operation => {
  const key = `${run}-${i}`
  const text = i % 4 === 0 ? twoSegments : oneSegment
  const to = (j: number) => destination(runDigit, i * batchSize + j)
  const sendAt = new Date(now + 2_000 + ((i * 7919) % 4_000)).toISOString()
  switch (i % 10) {
    case 6:
    case 7:
      return { kind: "scheduled", key, path: "/api/sms/v2/messages/", body: { to: to(0), text, send_at: sendAt } }
    case 8:
      return {
        kind: "batch",
        key,
        path: "/api/sms/v2/message-batches/",
        body: { recipients: Array.from({ length: batchSize }, (_, j) => to(j)), text, send_at: sendAt }
      }
    default:
      return { kind: "immediate", key, path: "/api/sms/v2/messages/", body: { to: to(0), text } }
  }
}

/** A creation's result and the service process (its index) that answered it. */
export interface Sent extends Result {
  readonly process: number
}

/** A probe's result. */
export interface Probe extends Exchange {
  readonly path: string
  readonly process: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

/**
 * Sends creations at `ratePerSecond`, alternately to each of `services`, until `stop()` says so,
 * then waits for every answer. Each result is pushed to `results` as it comes.
 */
export const steadyLoad = async (options: {
  readonly services: ReadonlyArray<Served>
  readonly apiKey: string
  readonly ratePerSecond: number
  readonly make: (i: number) => Operation
  readonly results: Array<Sent>
  readonly stop: () => boolean
}): Promise<void> => {
  const intervalMs = 1000 / options.ratePerSecond
  const started = Date.now()
  const inFlight: Array<Promise<void>> = []
  for (let i = 0; !options.stop(); i++) {
    // pacing the sends, not waiting for work
    await sleep(started + i * intervalMs - Date.now())
    const process = i % options.services.length
    const op = options.make(i)
    inFlight.push(
      perform(options.services[process]!, options.apiKey, op).then((r) => void options.results.push({ ...r, process }))
    )
  }
  await Promise.all(inFlight)
}

/** Asks every service's `/ready` every `intervalMs` until `stop()` says so. */
export const probeReadiness = async (
  services: ReadonlyArray<Served>,
  probes: Array<Probe>,
  stop: () => boolean,
  intervalMs = 250
): Promise<void> => {
  while (!stop()) {
    const round = await Promise.all(
      services.map(async (s, process) => ({ path: "/ready", process, ...(await exchange(s, "GET", "/ready")) }))
    )
    probes.push(...round)
    await sleep(intervalMs)
  }
}
