/**
 * `/ready`'s answer (src/http/Health.ts `readinessAnswer`) with the fleet's bind slots: a process
 * on standby (another holds every slot of its route) is ready, since it hands its messages over;
 * a process holding a slot it cannot bind with is not; the database must take writes in any case
 * (a standby behind the proxy during a failover answers, and is not ready).
 */
import { describe, expect, it } from "vitest"
import { readinessAnswer } from "../../src/http/Health.ts"
import type { DatabaseState } from "../../src/db/DatabaseHealth.ts"
import type { RouteHealth } from "../../src/provider/Provider.ts"

const writable: DatabaseState = { _tag: "Writable" }
const unreachable: DatabaseState = { _tag: "Unreachable" }
const standbyDatabase: DatabaseState = { _tag: "ReadOnly", why: "it is in recovery (a standby)" }

const standby: RouteHealth = {
  route: "telma",
  connected: false,
  detail: "standby: the fleet's bind is held by other processes",
  slot: { held: null, of: 1 }
}
const refused: RouteHealth = {
  route: "telma",
  connected: false,
  detail: "bind refused by 10.1.2.3:2775: 0x0d ESME_RBINDFAIL",
  slot: { held: 0, of: 1 }
}
const bound: RouteHealth = {
  route: "telma",
  connected: true,
  detail: "bound to 10.1.2.3:2775 as aggregator",
  slot: { held: 0, of: 1 }
}

describe("/ready with bind slots", () => {
  it("is 200 on standby and when bound, with each route's slot", () => {
    expect(readinessAnswer({ database: writable, routes: [standby] })).toEqual({
      status: 200,
      body: { status: "ready", routes: [standby] }
    })
    expect(readinessAnswer({ database: writable, routes: [bound] })).toEqual({
      status: 200,
      body: { status: "ready", routes: [bound] }
    })
  })

  it("is 503 naming why while the database answers but cannot take writes (a standby during a failover)", () => {
    const answer = readinessAnswer({ database: standbyDatabase, routes: [bound] })
    expect(answer.status).toBe(503)
    expect(answer.body).toMatchObject({
      error: {
        code: "service_unavailable",
        message: "The database cannot take writes: it is in recovery (a standby)",
        details: [
          { field: "database", message: "cannot take writes: it is in recovery (a standby)" },
          { field: "routes.telma" }
        ]
      }
    })
  })

  it("is 503 when this process holds the slot and cannot bind, or the database does not answer", () => {
    const notBound = readinessAnswer({ database: writable, routes: [refused] })
    expect(notBound.status).toBe(503)
    expect(notBound.body).toMatchObject({
      error: {
        details: [
          { field: "database", message: "answers" },
          { field: "routes.telma", message: `not bound: ${refused.detail}` }
        ]
      }
    })
    const noDatabase = readinessAnswer({ database: unreachable, routes: [standby] })
    expect(noDatabase.status).toBe(503)
    expect(noDatabase.body).toMatchObject({
      error: {
        message: "The database is not reachable",
        details: [
          { field: "database", message: "not reachable" },
          { field: "routes.telma", message: `standby: ${standby.detail}` }
        ]
      }
    })
  })
})
