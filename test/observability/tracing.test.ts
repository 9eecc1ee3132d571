/**
 * OTLP trace export, through the whole service as `npm start` assembles it (src/app/AppLayer.ts `mainLayer`) on a
 * loopback port, with a tiny collector on another: the spans of a request arrive at
 * `<endpoint>/v1/traces` as OTLP JSON under the configured service name, in the request's trace;
 * and with no collector listening, or one that never answers, requests still succeed while the
 * exporter fails in the background, and the service still stops promptly.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { mainLayer } from "../../src/app/AppLayer.ts"
import { exportBatchSpansMax, exportShutdownMs, tracingLayer } from "../../src/observability/Tracing.ts"
import { adminToken, testConfig } from "../support/TestApp.ts"

interface Received {
  readonly path: string
  readonly contentType: string | undefined
  // biome-ignore lint/suspicious/noExplicitAny: OTLP JSON, asserted field by field
  readonly body: any
}

const listen = (server: Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
  })

const servers: Array<Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await close(s)
  }
})

/** A collector that stores every POST, answering 200 (or never, when `hang`). */
const startCollector = async (options: { readonly hang?: boolean } = {}) => {
  const received: Array<Received> = []
  const server = createServer(async (req, res) => {
    const text = await readBody(req)
    received.push({ path: req.url ?? "", contentType: req.headers["content-type"], body: JSON.parse(text) })
    if (options.hang) return
    res.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
  servers.push(server)
  return { port: await listen(server), received }
}

/** A loopback port nothing listens on. */
const freePort = async () => {
  const probe = createServer()
  const port = await listen(probe)
  await close(probe)
  return port
}

/** The service as src/main.ts launches it, on a free port; `stop` closes it like a SIGTERM. */
const startService = async (otlpEndpoint: string) => {
  const port = await freePort()
  const scope = Effect.runSync(Scope.make())
  await Effect.runPromise(
    Layer.buildWithScope(mainLayer(testConfig({ port, otlpEndpoint, otelServiceName: "sms-tracing-test" })), scope)
  )
  const call = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  const stop = async () => {
    const started = Date.now()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    return Date.now() - started
  }
  return { call, stop }
}

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const traceparent = `00-${traceId}-00f067aa0ba902b7-01`

// biome-ignore lint/suspicious/noExplicitAny: OTLP JSON, read field by field
type Json = any
const spansOf = (received: ReadonlyArray<Received>): Array<Json> =>
  received.flatMap((r) => r.body.resourceSpans.flatMap((rs: Json) => rs.scopeSpans.flatMap((ss: Json) => ss.spans)))

describe("OTLP trace export", () => {
  it("installs nothing when OTEL_EXPORTER_OTLP_ENDPOINT is unset", () => {
    expect(tracingLayer({ otlpEndpoint: undefined, otelServiceName: "sms-service" })).toBe(Layer.empty)
  })

  it("sends the spans of a request to <endpoint>/v1/traces as JSON, in the request's trace", async () => {
    const collector = await startCollector()
    const service = await startService(`http://127.0.0.1:${collector.port}`)
    const res = await service.call("POST", "/admin/v1/organizations", { traceparent }, { name: "Traced org" })
    expect(res.status).toBe(201)
    // stopping flushes what is buffered
    await service.stop()

    expect(collector.received.length).toBeGreaterThan(0)
    for (const r of collector.received) {
      expect(r.path).toBe("/v1/traces")
      expect(r.contentType).toMatch(/^application\/json/)
      const attributes = r.body.resourceSpans[0].resource.attributes
      expect(attributes).toContainEqual({ key: "service.name", value: { stringValue: "sms-tracing-test" } })
    }
    const inTrace = spansOf(collector.received).filter((s) => s.traceId === traceId)
    expect(inTrace.map((s) => s.name)).toEqual(expect.arrayContaining(["POST", "Organisations.create"]))
  })

  it("never exports a provider's notify path (its secret): notify requests have no server span", async () => {
    const collector = await startCollector()
    const service = await startService(`http://127.0.0.1:${collector.port}`)
    const notify = await service.call("POST", "/providers/orange/receipts/Zecret-Of-The-Notify-Path-00000", {}, {})
    expect(notify.status).toBe(404)
    const res = await service.call("POST", "/admin/v1/organizations", { traceparent }, { name: "Traced org" })
    expect(res.status).toBe(201)
    await service.stop()
    const spans = spansOf(collector.received)
    expect(spans.filter((s) => s.traceId === traceId).map((s) => s.name)).toContain("POST")
    expect(JSON.stringify(collector.received)).not.toContain("Zecret-Of-The-Notify-Path")
  })

  it.each([
    ["no collector listening", false],
    ["a collector that never answers", true]
  ])("keeps answering with %s, and still stops promptly", async (_, listening) => {
    const hanging = listening ? await startCollector({ hang: true }) : undefined
    const service = await startService(`http://127.0.0.1:${hanging?.port ?? (await freePort())}`)
    // more spans than a batch, so an export runs (and fails or hangs) while requests go on
    let slowestMs = 0
    for (let i = 0; i < exportBatchSpansMax + 100; i++) {
      const started = Date.now()
      expect((await service.call("GET", "/health")).status).toBe(200)
      slowestMs = Math.max(slowestMs, Date.now() - started)
    }
    const res = await service.call("POST", "/admin/v1/organizations", { traceparent }, { name: "Untraced org" })
    expect(res.status).toBe(201)
    // an export waiting on the collector (3 retries, or the post timeout) would hold a request for seconds
    expect(slowestMs).toBeLessThan(2500)
    if (hanging !== undefined) expect(hanging.received.length).toBeGreaterThan(0)
    expect(await service.stop()).toBeLessThan(exportShutdownMs + 2000)
  })
})
