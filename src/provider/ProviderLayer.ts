/**
 * The provider SMS_PROVIDER chooses, measured the same way whichever it is (Metered.ts). The
 * simulator also provides `SimulatorControl` (the console's receipt button and the test clock
 * use it); a real adapter does not. On PostgreSQL, SMPP shares each SMSC's binds with the fleet
 * of processes through the database (BindSlots.ts), and a OneAPI route its one sender; a routing file with `oneapi` entries or
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

/**
 * The SMPP adapter, with OneAPI routes and fallbacks over it when the routing file has some; on
 * PostgreSQL over the fleet's slots (an SMSC's binds, a OneAPI route's one sender).
 */
const realProvider = (c: AppConfigShape, smpp: SmppSettings) => {
  const provider = needsRouting(smpp)
    ? routedProviderLayer(smpp, publicUrlOf(c), smppProviderLayer(smpp))
    : smppProviderLayer(smpp)
  // the embedded PGlite serves one process only: its binds are the fleet's, no slot to lease
  return c.databaseUrl === undefined ? provider : provider.pipe(Layer.provide(BindSlotStore.layer))
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
