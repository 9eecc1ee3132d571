/**
 * Scenario 9: the same drain as scenario 6 through SMPP: a service process with
 * SMS_PROVIDER=smpp bound to the SMSC simulator (a separate process, zero delays), draining as
 * many due messages; its messages/s beside the in-process simulator's.
 */
import type { BenchContext, OrgWithLot } from "../context.ts"
import { memorySampler, startService } from "../service.ts"
import { startSmsc } from "../simulators.ts"
import { type DrainFacts, serviceDrain } from "./drain.ts"

/** Drains through SMPP; the service's peak RSS goes to `memory` under the phase's name. */
export const smppDrain = async (
  ctx: BenchContext,
  org: OrgWithLot,
  logDir: string,
  memory: Record<string, number>
): Promise<DrainFacts> => {
  const smsc = await startSmsc(logDir)
  try {
    const service = await startService({
      databaseUrl: ctx.url,
      logDir,
      env: { SMS_PROVIDER: "smpp", SMS_SMPP_URL: smsc.url }
    })
    const sampler = memorySampler(service.pid)
    try {
      return await serviceDrain({ ...ctx, service }, org)
    } finally {
      memory["SMPP drain"] = sampler.stop()
      await service.stop()
    }
  } finally {
    await smsc.stop()
  }
}
