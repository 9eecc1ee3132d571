/** Turns the scenario results into the rows of the table, with their targets. */
import type { GraphileResult } from "./graphile.ts"
import type { LoadResult } from "./load.ts"
import { absolute, compare, type Row } from "./report.ts"
import type { BatchResult } from "./scenarios/batch.ts"
import type { ClosedLoopResult, OpenLoopResult } from "./scenarios/admission.ts"
import type { ClaimResult, DrainFacts } from "./scenarios/drain.ts"
import type { OptOutFacts } from "./scenarios/optouts.ts"
import { type FairShareFacts, fairShareMps } from "./scenarios/fairshare.ts"
import type { FlowFacts } from "./scenarios/flow.ts"
import type { ObservabilityResult } from "./scenarios/observability.ts"
import type { OneApiDrainFacts } from "./scenarios/oneapi.ts"
import type { RetentionFacts } from "./scenarios/retention.ts"
import type { WebhookDrainFacts, WebhookFlowFacts } from "./scenarios/webhooks.ts"
import { round } from "./stats.ts"

export interface Results {
  s1?: ClosedLoopResult
  /** Scenario 1's load again, right after it, alternated between an organisation holding many opt-outs and one holding none. */
  s1OptOuts?: OptOutFacts
  s2?: OpenLoopResult
  s3?: LoadResult
  s4?: LoadResult
  s5?: BatchResult
  s6?: { readonly service: DrainFacts; readonly claim?: ClaimResult; readonly graphile?: GraphileResult }
  s8?: FlowFacts
  s9?: DrainFacts
  s10?: ObservabilityResult
  s11?: FairShareFacts
  s12?: FairShareFacts
  s13?: LoadResult
  s16?: RetentionFacts
  s14?: WebhookFlowFacts
  s15?: WebhookDrainFacts
  /** Blocks drained alternately through a OneAPI route and an SMPP route of one service. */
  s17?: OneApiDrainFacts
  /** HTTP-created messages still `processing` (with their key in progress) 2 s after the HTTP scenarios. */
  leftProcessing?: number
  /** Peak RSS (MB) of the service per scenario. */
  memory: Record<string, number>
}

export const rowsOf = (r: Results, connections: number, batchConnections: number): Array<Row> => {
  const rows: Array<Row> = []
  const s1 = r.s1
  if (s1 !== undefined) {
    const label = `pgbench -c ${s1.pgbench.clients}`
    const name = `1 scheduled admission, ${connections} conn`
    rows.push(
      compare(
        `${name}: req/s vs the reference`,
        s1.service.reqPerSec,
        s1.reference.tps,
        `reference-admission.sql, pgbench -c ${s1.reference.clients}`,
        { kind: "min", value: 0.6 }
      )
    )
    rows.push(absolute(`${name}: p99 ms`, s1.service.p99Ms, { kind: "atMost", value: 100, unit: "ms" }))
    rows.push(compare(`${name}: req/s vs its own SQL`, s1.service.reqPerSec, s1.pgbench.tps, label, { kind: "report" }))
    rows.push(
      compare(
        `${name}: req/s vs pgbench at the pool size`,
        s1.service.reqPerSec,
        s1.pgbenchPool.tps,
        `pgbench -c ${s1.pgbenchPool.clients}`,
        { kind: "report" }
      )
    )
    rows.push(compare(`${name}: p50 ms`, s1.service.p50Ms, s1.pgbench.p50Ms, label, { kind: "report" }))
    rows.push(compare(`${name}: p99 ms vs its own SQL`, s1.service.p99Ms, s1.pgbench.p99Ms, label, { kind: "report" }))
  }
  const o = r.s1OptOuts
  if (o !== undefined) {
    const name = `1 scheduled admission, ${connections} conn, ${o.seeded} opt-outs in the organisation`
    const label = "the same load alternated on an organisation without opt-outs"
    rows.push(compare(`${name}: req/s`, o.with.reqPerSec, o.without.reqPerSec, label, { kind: "min", value: 0.9 }))
    rows.push(compare(`${name}: p99 ms`, o.with.p99Ms, o.without.p99Ms, label, { kind: "max", value: 1.1 }))
    rows.push(
      absolute(`${name}: opt-out key lookups per admission`, o.lookupsPerAdmission, {
        kind: "min",
        value: 0.9
      })
    )
  }
  if (r.s2 !== undefined) {
    const { rate, pgbench, service, autocannon } = r.s2
    const label = `pgbench --rate ${rate}`
    rows.push(
      compare(`2 open loop at ${rate}/s (Poisson): p99 ms`, service.p99Ms, pgbench.p99Ms, label, {
        kind: "max",
        value: 3
      })
    )
    rows.push(
      compare(`2 open loop at ${rate}/s (autocannon overallRate): p99 ms`, autocannon.p99Ms, pgbench.p99Ms, label, {
        kind: "report"
      })
    )
  }
  if (r.s3 !== undefined && s1 !== undefined) {
    rows.push(
      compare("3 immediate send, zero-delay simulator: req/s", r.s3.reqPerSec, s1.service.reqPerSec, "scenario 1", {
        kind: "report"
      })
    )
    rows.push(compare("3 immediate send: p99 ms", r.s3.p99Ms, s1.service.p99Ms, "scenario 1", { kind: "report" }))
  }
  if (r.s4 !== undefined && s1 !== undefined) {
    rows.push(
      compare("4 idempotent replay: req/s", r.s4.reqPerSec, s1.service.reqPerSec, "scenario 1", {
        kind: "min",
        value: 1.5
      })
    )
  }
  if (r.s5 !== undefined) {
    const { size, pgbench, service } = r.s5
    const label = `pgbench -c ${pgbench.clients}`
    const name = `5 batch of ${size}, ${batchConnections} conn`
    rows.push(compare(`${name}: p50 ms`, service.p50Ms, pgbench.p50Ms, label, { kind: "max", value: 2 }))
    rows.push(compare(`${name}: p99 ms`, service.p99Ms, pgbench.p99Ms, label, { kind: "report" }))
    rows.push(
      compare(`${name}: recipients/s`, round(service.reqPerSec * size, 0), round(pgbench.tps * size, 0), label, {
        kind: "report"
      })
    )
  }
  if (r.s6 !== undefined) {
    const { service, claim, graphile } = r.s6
    const name = `6 dispatcher drain of ${service.count}`
    if (claim !== undefined) {
      rows.push(
        compare(`${name}: messages/s`, service.messagesPerSec, claim.messagesPerSec, "claim SQL, pgbench -c 1", {
          kind: "min",
          value: 0.5
        })
      )
    }
    if (graphile !== undefined) {
      rows.push(
        compare(
          `${name}: messages/s vs graphile-worker`,
          service.messagesPerSec,
          graphile.jobsPerSec,
          `graphile-worker jobs/s, ${graphile.concurrency} in flight`,
          { kind: "above", value: 1 }
        )
      )
    }
    rows.push(
      compare(
        `${name}: due->submit lag p99 s`,
        service.lagP99S,
        claim?.drain.lagP99S ?? Number.NaN,
        "claim SQL, pgbench -c 1",
        { kind: "report" }
      )
    )
    // CPU per message hardly moves with the machine's load: where the drain's cost goes
    const perThousand = (seconds: number, count: number) => round((seconds / count) * 1e6, 0)
    if (service.cpu !== undefined && claim?.drain.cpu !== undefined) {
      const claimMs = perThousand(claim.drain.cpu.postgresS, claim.drain.count)
      rows.push(
        compare(
          `${name}: PostgreSQL CPU ms per 1000 messages`,
          perThousand(service.cpu.postgresS, service.count),
          claimMs,
          "claim SQL",
          { kind: "report" }
        )
      )
      rows.push(
        compare(
          `${name}: service + PostgreSQL CPU ms per 1000 messages`,
          perThousand(service.cpu.postgresS + service.cpu.serviceS, service.count),
          claimMs,
          "claim SQL",
          { kind: "report" }
        )
      )
    }
  }
  if (r.s8 !== undefined) {
    const name = `8 steady flow of ${r.s8.rate}/s falling due for ${r.s8.durationS} s`
    rows.push(absolute(`${name}: due->submit lag p99 s`, r.s8.lagP99S, { kind: "atMost", value: 1, unit: "s" }))
    rows.push(
      absolute(`${name}: receipts unapplied 2 s after they were sent`, r.s8.receiptsUnapplied, {
        kind: "atMost",
        value: 0,
        unit: ""
      })
    )
    rows.push(absolute(`${name}: messages not handed over 1 s after due, at the end`, r.s8.late, { kind: "report" }))
  }
  if (r.s9 !== undefined) {
    const name = `9 drain of ${r.s9.count} through SMPP to the SMSC simulator`
    rows.push(
      r.s6 === undefined
        ? absolute(`${name}: messages/s`, r.s9.messagesPerSec, { kind: "report" })
        : compare(
            `${name}: messages/s`,
            r.s9.messagesPerSec,
            r.s6.service.messagesPerSec,
            "scenario 6, in-process simulator",
            { kind: "report" }
          )
    )
  }
  if (r.s10 !== undefined && s1 !== undefined) {
    rows.push(
      compare(
        `10 scheduled admission with OTLP traces exported and /metrics scraped: req/s`,
        r.s10.service.reqPerSec,
        s1.service.reqPerSec,
        "scenario 1",
        { kind: "report" }
      )
    )
  }
  const fair = (n: string, f: FairShareFacts, where: string, lagS: number) => {
    const seeded = f.seededBy === "sql" ? "seeded with SQL" : "admitted as batches of 1000"
    const name = `${n} A: ${f.backlog} due at once (${seeded}), B: one a second for ${f.windowS} s, ${where}`
    rows.push(
      absolute(`${name}: B's lag (due -> processing) max s`, f.bLagMaxS, { kind: "atMost", value: lagS, unit: "s" })
    )
    rows.push(absolute(`${name}: B's lag p99 s`, f.bLagP99S, { kind: "report" }))
    rows.push(
      absolute(`${name}: B's messages handed over in the window, of ${f.bDue}`, f.bHandedOver, {
        kind: "min",
        value: f.bDue
      })
    )
  }
  if (r.s11 !== undefined) {
    fair("11", r.s11, "in-process simulator", 1)
    rows.push(absolute(`11 A's messages/s while B is served`, r.s11.aPerSec, { kind: "report" }))
  }
  if (r.s12 !== undefined) {
    fair("12", r.s12, `SMPP, mps ${fairShareMps}`, 2)
    rows.push(
      compare(
        `12 A's messages/s while B is served, against the cap`,
        r.s12.aPerSec,
        fairShareMps,
        `mps ${fairShareMps}`,
        { kind: "min", value: 0.9 }
      )
    )
  }
  if (r.s13 !== undefined) {
    rows.push(
      absolute(`13 immediate sends at 20/s while a backlog drains: p99 ms`, r.s13.p99Ms, {
        kind: "atMost",
        value: 250,
        unit: "ms"
      })
    )
  }
  if (r.s16 !== undefined) {
    const { seeded, idle, erasing } = r.s16
    const name = `16 scheduled admission, ${connections} conn, while retention erases ${seeded} old messages`
    const label = "the same load, retention idle"
    rows.push(compare(`${name}: req/s`, erasing.reqPerSec, idle.reqPerSec, label, { kind: "min", value: 0.9 }))
    rows.push(compare(`${name}: p99 ms`, erasing.p99Ms, idle.p99Ms, label, { kind: "max", value: 1.1 }))
    rows.push(
      absolute(
        `16 messages erased in the measured ${r.s16.windowS} s (${r.s16.erasedPerSec}/s; ${r.s16.leftAfter} left after)`,
        r.s16.erasedInWindow,
        { kind: "above", value: 0 }
      )
    )
    rows.push(
      absolute(
        "16 erased messages whose key still replays its answer, plus credits moved by erasure",
        r.s16.keysUnerased + Math.abs(r.s16.creditsMoved),
        { kind: "atMost", value: 0, unit: "" }
      )
    )
  }
  if (r.s14 !== undefined) {
    const name = `14 webhooks, a receiver subscribed to every event while ${r.s14.rate}/s fall due for ${r.s14.durationS} s`
    rows.push(absolute(`${name}: events/s received`, r.s14.eventsPerSec, { kind: "report" }))
    rows.push(
      absolute(`${name}: due->event (message.accepted received) p99 ms`, r.s14.dueToEventP99Ms, { kind: "report" })
    )
    rows.push(absolute(`${name}: status change->event received p99 ms`, r.s14.changeToEventP99Ms, { kind: "report" }))
    rows.push(
      absolute(`${name}: events never received, of ${r.s14.events}`, r.s14.missing, {
        kind: "atMost",
        value: 0,
        unit: ""
      })
    )
  }
  if (r.s15 !== undefined && r.s6 !== undefined) {
    const name = `15 dispatcher drain of ${r.s15.drain.count} with an endpoint subscribed to every event`
    rows.push(
      compare(
        `${name}: messages/s`,
        r.s15.drain.messagesPerSec,
        r.s6.service.messagesPerSec,
        "scenario 6 without webhooks, same run",
        { kind: "min", value: 0.8 }
      )
    )
    rows.push(
      absolute(`${name}: events not yet received when the drain ended, of ${r.s15.events}`, r.s15.behindAtDrainEnd, {
        kind: "report"
      })
    )
  }
  if (r.s17 !== undefined) {
    const { smpp, oneapi, blockSize, order } = r.s17
    const name = `17 drain of ${order.length / 2} blocks of ${blockSize} through the OneAPI simulator`
    rows.push(
      compare(
        `${name}: messages/s`,
        oneapi.messagesPerSec,
        smpp.messagesPerSec,
        "the same blocks through the SMSC simulator, alternated",
        { kind: "min", value: 0.5 }
      )
    )
    rows.push(
      compare(
        `${name}: service CPU ms per 1000`,
        oneapi.serviceCpuMsPer1000,
        smpp.serviceCpuMsPer1000,
        "the same through the SMSC simulator",
        { kind: "report" }
      )
    )
    rows.push(
      compare(
        `${name}: PostgreSQL CPU ms per 1000`,
        oneapi.postgresCpuMsPer1000,
        smpp.postgresCpuMsPer1000,
        "the same through the SMSC simulator",
        { kind: "report" }
      )
    )
    rows.push(
      compare(
        `${name}: simulator CPU ms per 1000`,
        oneapi.simulatorCpuMsPer1000,
        smpp.simulatorCpuMsPer1000,
        "the SMSC simulator's",
        { kind: "report" }
      )
    )
  }
  for (const [scenario, mb] of Object.entries(r.memory)) {
    rows.push(absolute(`7 peak RSS during ${scenario}, MB`, mb, { kind: "below", value: 256, unit: "MB" }))
  }
  return rows
}
