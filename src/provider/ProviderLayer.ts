/**
 * The provider SMS_PROVIDER chooses, measured the same way whichever it is (Metered.ts). The
 * simulator also provides `SimulatorControl` (the console's receipt button and the test clock
 * use it); a real adapter does not. On PostgreSQL, SMPP shares each SMSC's binds with the fleet
 * of processes through the database (BindSlots.ts).
 */
import { Effect, Layer } from "effect"
import { simulatorLayer } from "./inprocess/Simulator.ts"
import { AppConfig } from "../config/Config.ts"
import { MeteredProvider } from "./Metered.ts"
import { smppProviderLayer } from "./smpp/SmppProvider.ts"
import { BindSlotStore } from "./smpp/BindSlots.ts"

const Adapter = Layer.unwrap(
  Effect.map(AppConfig, (c) =>
    c.provider === "smpp" && c.smpp !== undefined
      ? // the embedded PGlite serves one process only: its binds are the fleet's, no slot to lease
        c.databaseUrl === undefined
        ? smppProviderLayer(c.smpp)
        : smppProviderLayer(c.smpp).pipe(Layer.provide(BindSlotStore.layer))
      : simulatorLayer({
          receiptDelayMs: c.simulatorReceiptDelayMs,
          slowMs: c.simulatorSlowMs,
          autonomous: c.clock !== "test"
        })
  )
)

export const providerLayer = MeteredProvider.pipe(Layer.provideMerge(Adapter))
