/**
 * The provider SMS_PROVIDER chooses. The simulator also provides `SimulatorControl` (the
 * console's receipt button and the test clock use it); a real adapter does not.
 */
import { Effect, Layer } from "effect"
import { SimulatorLive } from "../../simulator/Simulator.ts"
import { AppConfig } from "../Config.ts"

export const ProviderLive = Layer.unwrap(Effect.map(AppConfig, (c) =>
  SimulatorLive({
    receiptDelayMs: c.simulatorReceiptDelayMs,
    slowMs: c.simulatorSlowMs,
    autonomous: c.clock !== "test"
  })))
