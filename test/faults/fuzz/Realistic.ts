/**
 * What makes a schema sample realistic where a random one would always be refused: RFC 3339
 * times around the service's clock, calendar dates, registered sender names, the simulator's
 * test numbers. Without it almost no generated creation would get past validation.
 */
import fc from "fast-check"
import { testNumbers } from "../../../src/provider/inprocess/Simulator.ts"
import type { Fixtures } from "./Fixtures.ts"
import type { Json, RouteSamples } from "./Samples.ts"

/**
 * RFC 3339 timestamps: one of 31 instants after `from` (each of the first 24 hours, each of the
 * first 7 days), or one around the service's clock `now` that is not quite right.
 */
const timestamp = (now: number, from: number): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .integer({ min: 1, max: 31 })
        .map((k) => new Date(from + (k <= 24 ? k * 3600 : (k - 24) * 86_400) * 1000).toISOString())
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        new Date(now - 86_400_000).toISOString(),
        new Date(now + 86_400_000).toISOString().replace("Z", "+03:00"),
        new Date(now + 86_400_000).toISOString().replace("Z", "-23:59"),
        new Date(now + 86_400_000).toISOString().replace("Z", ""),
        new Date(now + 86_400_000).toISOString().toLowerCase(),
        "9999-12-31T23:59:59Z",
        "9999-12-31T23:59:59-23:59",
        "0000-01-01T00:00:00Z",
        "2026-02-30T10:00:00Z",
        "2030-06-30T23:59:60Z",
        "2030-01-01T00:00:00.123456789Z",
        "+275760-09-13T00:00:00Z",
        "2030-01-01 10:00:00Z"
      )
    }
  )

/**
 * Where the fuzz schedules messages: past what its clock advances reach (at most 2^31 seconds,
 * 68 years), so that the advances, which run the work of every due instant before they answer,
 * stay quick whatever was scheduled before them.
 */
const schedulingFrom = Date.UTC(2200, 0, 1)

const calendarDate = (now: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.integer({ min: -5, max: 3650 }).map((d) => new Date(now + d * 86_400_000).toISOString().slice(0, 10)),
    fc.constantFrom("9999-12-31", "0000-01-01", "0001-01-01", "2026-02-30", "2026-13-01", "1900-02-29", "2000-02-29")
  )

/**
 * The simulator's test numbers but two: the slow one holds a request for its delay, and one
 * unknown for good is verified again every few minutes of clock time for ever, so that a clock
 * advance over days would run thousands of verification rounds per such message.
 */
const simulatorNumbers = Object.values(testNumbers).filter(
  (n) => n !== testNumbers.slow && n !== testNumbers.unknownForGood
)

/** Makes a schema sample realistic where a random one would always be refused: times, sender names, test numbers. */
export const realistic = (payload: Json, samples: RouteSamples, f: Fixtures): fc.Arbitrary<Json> => {
  const overrides: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [field, format] of samples.formats) {
    if (format === "date-time") overrides[field] = timestamp(f.now, field === "send_at" ? schedulingFrom : f.now)
    if (format === "date") overrides[field] = calendarDate(f.now)
  }
  for (const field of ["sender_name", "default_sender_name"])
    overrides[field] = fc.constantFrom(...f.senders, "INFO", "NOPE")
  for (const field of ["to", "phone_number"]) {
    if (!samples.formats.has(field)) overrides[field] = fc.constantFrom(...simulatorNumbers)
  }
  if ("seconds" in payload) overrides.seconds = fc.integer({ min: 1, max: 3600 })
  // fields present, and timestamps the sample left out (a message gets a send_at now and then)
  const fields = Object.keys(overrides).filter((k) => k in payload || samples.formats.get(k) === "date-time")
  if (fields.length === 0) return fc.constant(payload)
  return fc.tuple(...fields.map((k) => fc.option(overrides[k]!, { freq: 2, nil: undefined }))).map((values) => {
    const out: Record<string, unknown> = { ...payload }
    fields.forEach((k, i) => {
      if (values[i] !== undefined) out[k] = values[i]
    })
    return out
  })
}
