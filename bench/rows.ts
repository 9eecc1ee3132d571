/** Turns the scenario results into the rows of the table, with their targets. */
import type { GraphileResult } from "./graphile.ts"
import type { LoadResult } from "./load.ts"
import { absolute, compare, type Row } from "./report.ts"
import type { BatchResult } from "./scenarios/batch.ts"
import type { ClosedLoopResult, OpenLoopResult } from "./scenarios/admission.ts"
import type { ClaimResult, DrainFacts } from "./scenarios/drain.ts"
import { round } from "./stats.ts"

export interface Results {
  s1?: ClosedLoopResult
  s2?: OpenLoopResult
  s3?: LoadResult
  s4?: LoadResult
  s5?: BatchResult
  s6?: { readonly service: DrainFacts; readonly claim?: ClaimResult; readonly graphile?: GraphileResult }
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
    rows.push(compare(`${name}: req/s`, s1.service.reqPerSec, s1.pgbench.tps, label, { kind: "min", value: 0.7 }))
    rows.push(compare(`${name}: req/s vs pgbench at the pool size`, s1.service.reqPerSec, s1.pgbenchPool.tps, `pgbench -c ${s1.pgbenchPool.clients}`, { kind: "report" }))
    rows.push(compare(`${name}: p50 ms`, s1.service.p50Ms, s1.pgbench.p50Ms, label, { kind: "report" }))
    rows.push(compare(`${name}: p99 ms`, s1.service.p99Ms, s1.pgbench.p99Ms, label, { kind: "report" }))
  }
  if (r.s2 !== undefined) {
    const { rate, pgbench, service, autocannon } = r.s2
    const label = `pgbench --rate ${rate}`
    rows.push(compare(`2 open loop at ${rate}/s (Poisson): p99 ms`, service.p99Ms, pgbench.p99Ms, label, { kind: "max", value: 3 }))
    rows.push(compare(`2 open loop at ${rate}/s (autocannon overallRate): p99 ms`, autocannon.p99Ms, pgbench.p99Ms, label, { kind: "report" }))
  }
  if (r.s3 !== undefined && s1 !== undefined) {
    rows.push(compare("3 immediate send, zero-delay simulator: req/s", r.s3.reqPerSec, s1.service.reqPerSec, "scenario 1", { kind: "report" }))
    rows.push(compare("3 immediate send: p99 ms", r.s3.p99Ms, s1.service.p99Ms, "scenario 1", { kind: "report" }))
  }
  if (r.s4 !== undefined && s1 !== undefined) {
    rows.push(compare("4 idempotent replay: req/s", r.s4.reqPerSec, s1.service.reqPerSec, "scenario 1", { kind: "min", value: 1.5 }))
  }
  if (r.s5 !== undefined) {
    const { size, pgbench, service } = r.s5
    const label = `pgbench -c ${pgbench.clients}`
    const name = `5 batch of ${size}, ${batchConnections} conn`
    rows.push(compare(`${name}: p50 ms`, service.p50Ms, pgbench.p50Ms, label, { kind: "max", value: 2 }))
    rows.push(compare(`${name}: p99 ms`, service.p99Ms, pgbench.p99Ms, label, { kind: "report" }))
    rows.push(compare(`${name}: recipients/s`, round(service.reqPerSec * size, 0), round(pgbench.tps * size, 0), label, { kind: "report" }))
  }
  if (r.s6 !== undefined) {
    const { service, claim, graphile } = r.s6
    const name = `6 dispatcher drain of ${service.count}`
    if (claim !== undefined) {
      rows.push(compare(`${name}: messages/s`, service.messagesPerSec, claim.messagesPerSec, "claim SQL, pgbench -c 1", { kind: "min", value: 0.3 }))
    }
    if (graphile !== undefined) {
      rows.push(compare(`${name}: messages/s vs graphile-worker`, service.messagesPerSec, graphile.jobsPerSec, `graphile-worker jobs/s, ${graphile.concurrency} in flight`, { kind: "above", value: 1 }))
    }
    rows.push(compare(`${name}: due->submit lag p99 s`, service.lagP99S, claim?.drain.lagP99S ?? Number.NaN, "claim SQL, pgbench -c 1", { kind: "report" }))
  }
  for (const [scenario, mb] of Object.entries(r.memory)) {
    rows.push(absolute(`7 peak RSS during ${scenario}, MB`, mb, { kind: "below", value: 256 }))
  }
  return rows
}
