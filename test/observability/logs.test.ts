/**
 * Log lines carry the real time, whatever clock the service judges by: under SMS_CLOCK=test the
 * service's clock stands still or runs days ahead, and an operator reads logs against the wall
 * clock. Effect's logger (loggingLayer) in-process, the access log through a started service.
 */
import { Effect, Layer } from "effect"
import { TestConsole } from "effect/testing"
import { afterAll, describe, expect, it } from "vitest"
import { clockLayer, ServiceClock } from "../../src/clock/ServiceClock.ts"
import { loggingLayer } from "../../src/observability/Logging.ts"
import { eventually } from "../support/Eventually.ts"
import { type Started, servingLine, startService } from "../support/ServiceProcess.ts"

const day = 86_400_000
const token = "logs-operator-token-123"

/** Asserts `iso` is within a minute of the real now. */
const expectRealTime = (iso: unknown) => {
  expect(typeof iso).toBe("string")
  expect(Math.abs(Date.parse(iso as string) - Date.now())).toBeLessThan(60_000)
}

describe("log timestamps under the test clock", () => {
  it("Effect's logger stamps a line with the real time, not the service's clock 30 days ahead", async () => {
    const lines = await Effect.gen(function* () {
      const clock = yield* ServiceClock
      yield* clock.set(Date.now() + 30 * day)
      yield* Effect.logInfo("after the advance")
      return yield* TestConsole.logLines
    }).pipe(
      Effect.provide(Layer.mergeAll(loggingLayer("info"), clockLayer("test"), TestConsole.layer)),
      Effect.runPromise
    )
    const line = lines.map((l) => JSON.parse(String(l))).find((l) => l.message === "after the advance")
    expect(line).toBeDefined()
    expectRealTime(line.timestamp)
  })

  describe("a service started with SMS_CLOCK=test", () => {
    let service: Started
    afterAll(async () => {
      service?.child.kill("SIGTERM")
      await service?.exited
    })

    it("stamps its access log with the real time after the clock moved 30 days", async () => {
      service = await startService({
        SMS_CLOCK: "test",
        SMS_DATA_DIR: "memory://",
        SMS_ADMIN_TOKEN: token,
        LOG_LEVEL: "info"
      })
      await service.waitFor(servingLine)
      const base = `http://127.0.0.1:${service.port}`
      const advanced = await fetch(`${base}/admin/v1/clock/advance`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ seconds: (30 * day) / 1000 })
      })
      expect(advanced.status).toBe(200)
      const { now } = (await advanced.json()) as { now: string }
      expect(Date.parse(now) - Date.now()).toBeGreaterThan(29 * day)

      expect((await fetch(`${base}/health?after=advance`)).status).toBe(200)
      const accessLine = async () =>
        service
          .output()
          .stdout.split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l))
          .find((l) => l.message === "http" && l.annotations?.path === "/health")
      // the line reaches the child's stdout as the answer leaves
      const line = await eventually(accessLine, (l) => l !== undefined, { what: "the access log line of /health" })
      expectRealTime(line.timestamp)
    })
  })
})
