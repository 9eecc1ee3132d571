/**
 * The provider SMS_PROVIDER chooses, measured the same way whichever it is (Metered.ts). The
 * simulator also provides `SimulatorControl` (the console's receipt button and the test clock
 * use it); a real adapter does not. On PostgreSQL, SMPP shares each SMSC's binds with the fleet
 * of processes through the database (BindSlots.ts); a routing file with `oneapi` entries or
 * fallbacks adds their routes beside the SMSCs and the chains between them (RoutedProvider.ts).
 */
import { Effect, Layer } from "effect"
import { simulatorLayer } from "./inprocess/Simulator.ts"
import { AppConfig, type AppConfigShape, publicUrlOf } from "../config/Config.ts"
import type { SmppSettings } from "../config/SmppSettings.ts"
import { needsRouting, routedProviderLayer } from "./RoutedProvider.ts"
import { MeteredProvider } from "./Metered.ts"
import { smppProviderLayer } from "./smpp/SmppProvider.ts"
import { BindSlotStore } from "./smpp/BindSlots.ts"

/** The SMPP adapter, over the fleet's bind slots on PostgreSQL; with OneAPI routes and fallbacks over it when the routing file has some. */
const realProvider = (c: AppConfigShape, smpp: SmppSettings) => {
  // the embedded PGlite serves one process only: its binds are the fleet's, no slot to lease
  const adapter =
    c.databaseUrl === undefined
      ? smppProviderLayer(smpp)
      : smppProviderLayer(smpp).pipe(Layer.provide(BindSlotStore.layer))
  return needsRouting(smpp) ? routedProviderLayer(smpp, publicUrlOf(c), adapter) : adapter
}

const Adapter = Layer.unwrap(
  Effect.map(AppConfig, (c) =>
    c.provider === "smpp" && c.smpp !== undefined
      ? realProvider(c, c.smpp)
      : simulatorLayer({
          receiptDelayMs: c.simulatorReceiptDelayMs,
          slowMs: c.simulatorSlowMs,
          autonomous: c.clock !== "test"
        })
  )
)

export const providerLayer = MeteredProvider.pipe(Layer.provideMerge(Adapter))
