/**
 * Every endpoint of every API the service serves (public, operator, /metrics) declares the
 * errors any endpoint can answer, whatever it does (`CommonErrors`: the edge answers them for
 * any route), so that its typed clients decode them and its document lists them. GET
 * /admin/v1/clock and GET /metrics once declared none, and their 406 reached clients as an
 * undeclared answer.
 */
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { describe, expect, it } from "vitest"
import { AdminApi } from "../../src/admin/AdminApi.ts"
import { Api } from "../../src/api/Api.ts"
import { CommonErrors } from "../../src/domain/Errors.ts"
import { MetricsApi } from "../../src/admin/MetricsRoute.ts"

const declared = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const found: Array<readonly [string, ReadonlyArray<number>]> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors }) => found.push([`${endpoint.method} ${endpoint.path}`, [...errors.keys()].sort()])
  })
  return found
}

const common = [...new Set(CommonErrors.map((e) => e.status))].sort()

describe("declared errors", () => {
  it.each([...declared(Api), ...declared(AdminApi), ...declared(MetricsApi)])(
    "%s declares every common error status",
    (_route, statuses) => {
      expect(common.filter((status) => !statuses.includes(status))).toEqual([])
    }
  )
})
