/**
 * The service's own composition (src/app/AppLayer.ts `serviceLayer`) as one layer, for tests that
 * drive its services directly rather than over HTTP (through @effect/vitest `layer(...)`): every
 * service and background worker over the test's database (a scratch one with `label` on
 * PostgreSQL), the configured provider and clock.
 */
import { serviceLayer } from "../../src/app/AppLayer.ts"
import { clockLayer } from "../../src/clock/ServiceClock.ts"
import type { AppConfigShape } from "../../src/config/Config.ts"
import { providerLayer } from "../../src/provider/ProviderLayer.ts"
import { scratchDatabaseLayer, testDatabaseLayer } from "./ScratchDatabase.ts"
import { testConfig } from "./TestApp.ts"

export const appServices = (options: { readonly label?: string; readonly config?: Partial<AppConfigShape> } = {}) => {
  const config = testConfig(options.config)
  const database = options.label === undefined ? testDatabaseLayer(config) : scratchDatabaseLayer(options.label, config)
  return serviceLayer({ config, database, provider: providerLayer, clock: clockLayer(config.clock) })
}
