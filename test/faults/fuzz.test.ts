/**
 * The HTTP fuzz (issue 10): a real service process (`node src/main.ts`, embedded database,
 * simulator, test clock) gets FUZZ_REQUESTS (20,000) generated requests over every route its
 * definitions declare, 16 in flight over real sockets, and the raw requests no client sends.
 * Every answer must be the spec's: never a 500, every error the error body (the project's own
 * schema) as JSON, every status one the endpoint declares; every request answered where HTTP
 * allows an answer; and the service still serves afterwards, having logged no failure.
 *
 * Generation is seeded (FUZZ_SEED, printed with the counts per route, status and kind): a
 * failure names the request's index and what was sent, so it can be replayed.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { servingLine, type Started, startService } from "../support/ServiceProcess.ts"
import { adminToken, remoteCaller } from "../support/TestApp.ts"
import { type Fixtures, makeFixtures } from "./fuzz/Fixtures.ts"
import { mutatedCases, type RawCase, rawCases } from "./fuzz/RawCases.ts"
import { type FuzzRequest, requestArbitrary } from "./fuzz/Requests.ts"
import { fuzzRoutes } from "./fuzz/Routes.ts"
import { routeSamples } from "./fuzz/Samples.ts"
import { makeTally, runPool } from "./fuzz/Tally.ts"
import { problemsOf } from "./fuzz/Verdict.ts"
import { exchange, makeClient, splitAnswers } from "./fuzz/Wire.ts"

const seed = Number(process.env.FUZZ_SEED ?? 20_261_123)
const total = Number(process.env.FUZZ_REQUESTS ?? 20_000)
const inFlight = 16
/** Seeded byte-level mutations of good requests, sent raw. */
const mutations = Number(process.env.FUZZ_MUTATIONS ?? 1000)
/** Requests generated per fast-check sample; chunk c uses seed + c. */
const chunk = 500

const routes = fuzzRoutes()
let service: Started
let fixtures: Fixtures

beforeAll(async () => {
  service = await startService({
    SMS_DATA_DIR: "memory://",
    SMS_ADMIN_TOKEN: adminToken,
    SMS_CLOCK: "test",
    SMS_SIMULATOR_SLOW_MS: "300",
    LOG_LEVEL: "warn"
  })
  await service.waitFor(servingLine)
  fixtures = await makeFixtures(`http://127.0.0.1:${service.port}`)
})

afterAll(async () => {
  if (service === undefined) return
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill("SIGTERM")
  await service.exited
})

const describeRequest = (r: FuzzRequest) => {
  const body =
    r.body === undefined
      ? ""
      : typeof r.body === "string"
        ? ` body ${JSON.stringify(r.body.slice(0, 200))}${r.body.length > 200 ? `… (${r.body.length})` : ""}`
        : ` body ${r.body.length} bytes`
  return `[${r.kind}] ${r.method} ${r.path.slice(0, 200)} headers ${JSON.stringify(r.headers).slice(0, 300)}${r.chunked ? " chunked" : ""}${body}`
}

/** The lines the service logged at level ERROR (a 500 logs one). */
const loggedErrors = () =>
  service
    .output()
    .stdout.split("\n")
    .filter((line) => line.includes('"level":"ERROR"'))

/**
 * Every generated request in order, `total` of them, the test clock's advances last: their jumps
 * (up to 68 years) would expire the dated credits and put every time near the clock in the past,
 * and the requests after them would reach less deep.
 */
function* generated(arbitrary: fc.Arbitrary<FuzzRequest>): Generator<readonly [number, FuzzRequest]> {
  const deferred: Array<readonly [number, FuzzRequest]> = []
  for (let start = 0; start < total; start += chunk) {
    const requests = fc.sample(arbitrary, { seed: seed + start / chunk, numRuns: Math.min(chunk, total - start) })
    for (const [i, r] of requests.entries()) {
      if (r.route.endsWith("/clock/advance")) deferred.push([start + i, r])
      else yield [start + i, r]
    }
  }
  yield* deferred
}

describe("the HTTP fuzz", () => {
  it(`${total} generated requests over every route: no 500, every error the spec's body, every status declared`, async () => {
    const started = Date.now()
    const samples = new Map(routes.map((r, i) => [r.key, routeSamples(r, 200, seed + 1000 * (i + 1))]))
    const arbitrary = requestArbitrary({ routes, samples, fixtures })
    const client = makeClient(service.port, inFlight)
    const tally = makeTally()
    // how the requests with a NUL or an unpaired surrogate in a field or path id were answered
    const unstorable = new Map<number, number>()
    await runPool(generated(arbitrary), inFlight, async ([index, request]) => {
      const sentAt = Date.now()
      const outcome = await client.send(request)
      const ms = Date.now() - sentAt
      if (outcome._tag === "NoAnswer") {
        tally.record(request.route, request.kind, "none", ms, {
          index,
          request: describeRequest(request),
          problems: [outcome.reason]
        })
        return
      }
      const problems = problemsOf(routes, request.method, request.path, outcome.answer, request.unstorable)
      if (request.unstorable !== undefined)
        unstorable.set(outcome.answer.status, (unstorable.get(outcome.answer.status) ?? 0) + 1)
      tally.record(
        request.route,
        request.kind,
        String(outcome.answer.status),
        ms,
        problems.length === 0
          ? undefined
          : {
              index,
              request: describeRequest(request),
              problems: [
                ...problems,
                `answer ${outcome.answer.status} ${outcome.answer.body.toString("utf8").slice(0, 200)}`
              ]
            }
      )
    })
    client.close()
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    console.log(
      tally.report(
        `fuzz: seed ${seed}, ${tally.count} generated requests over ${routes.length} routes in ${seconds} s, ${inFlight} in flight`
      )
    )
    console.log(
      `  NUL or unpaired surrogate in a field or path id: ${[...unstorable.values()].reduce((a, b) => a + b, 0)} requests, answered ${[
        ...unstorable
      ]
        .sort()
        .map(([k, n]) => `${k}:${n}`)
        .join(" ")}`
    )
    for (const f of tally.failures().slice(0, 30))
      console.log(`#${f.index} ${f.request}\n    ${f.problems.join("\n    ")}`)
    const logged = loggedErrors()
    if (logged.length > 0)
      console.log(
        `the service logged ${logged.length} errors; the first:\n${logged
          .slice(0, 5)
          .map((l) => l.slice(0, 1500))
          .join("\n")}`
      )

    expect(tally.count).toBe(total)
    expect(tally.failures().map((f) => `#${f.index}: ${f.problems[0]}`)).toEqual([])
    // every route was exercised, a plain one included (a tenth of an even share at least)
    for (const route of routes)
      expect(tally.perRoute(route.key), route.key).toBeGreaterThanOrEqual(Math.floor(total / routes.length / 10))
  })

  it("answers each raw request no client sends exactly once, with the spec's body, then closes", async () => {
    const started = Date.now()
    const cases: ReadonlyArray<RawCase & { readonly upTo?: number }> = [
      ...rawCases(fixtures),
      ...mutatedCases(fixtures, mutations, seed)
    ]
    const tally = makeTally()
    await runPool(cases.entries(), inFlight, async ([index, c]) => {
      const sentAt = Date.now()
      const { raw, closedBy } = await exchange(service.port, c.chunks, { halfClose: true })
      const { answers, rest } = splitAnswers(
        raw,
        c.requests.map((r) => r.method)
      )
      const [least, most] = c.upTo === undefined ? [c.requests.length, c.requests.length] : [1, c.upTo]
      const problems = [
        ...(closedBy === "server" ? [] : ["the connection stayed open"]),
        ...(answers.length >= least && answers.length <= most
          ? []
          : [`${answers.length} answers, expected ${least === most ? least : `${least} to ${most}`}`]),
        ...(rest.length === 0
          ? []
          : [`bytes after the answers: ${JSON.stringify(rest.toString("latin1").slice(0, 200))}`]),
        ...answers.flatMap((a, i) => problemsOf(routes, c.requests[i]?.method ?? "-", c.requests[i]?.path ?? "", a))
      ]
      const route = c.upTo === undefined ? "raw: handwritten" : "raw: mutated"
      tally.record(
        route,
        route,
        answers.map((a) => a.status).join("+") || "none",
        Date.now() - sentAt,
        problems.length === 0
          ? undefined
          : {
              index,
              request: c.name,
              problems: [...problems, `received ${JSON.stringify(raw.toString("latin1").slice(0, 400))}`]
            }
      )
    })
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    console.log(tally.report(`fuzz: seed ${seed}, ${tally.count} raw requests in ${seconds} s`))
    for (const f of tally.failures().slice(0, 30))
      console.log(`#${f.index} ${f.request}\n    ${f.problems.join("\n    ")}`)
    expect(tally.failures().map((f) => `${f.request}: ${f.problems[0]}`)).toEqual([])
  })

  it("still serves afterwards, and logged no failed request", async () => {
    const call = remoteCaller(`http://127.0.0.1:${service.port}`)
    expect((await call("GET", "/health")).status).toBe(200)
    const balance = await call("GET", "/api/sms/v2/balance/", { token: fixtures.keys.full })
    expect(balance.status, balance.text).toBe(200)
    const sent = await call("POST", "/api/sms/v2/messages/", {
      token: fixtures.keys.full,
      body: { to: "+261340000001", text: "Salama" },
      headers: { "idempotency-key": `after-the-fuzz-${seed}` }
    })
    expect(sent.status, sent.text).toBe(201)
    expect(loggedErrors().map((line) => line.slice(0, 500))).toEqual([])
  })
})
