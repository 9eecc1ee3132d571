/** The service graph over a SqlClient and the configuration: every service the handlers and workers use. */
import { Effect, Layer } from "effect"
import { SimulatorLive } from "../simulator/Simulator.ts"
import { Batches } from "./batches/Batches.ts"
import { AppConfig } from "./Config.ts"
import { Contacts } from "./contacts/Contacts.ts"
import { Provider } from "./dispatch/Provider.ts"
import { WorkQueue } from "./dispatch/WorkQueue.ts"
import { WorkSteps } from "./dispatch/WorkSteps.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import { Ids } from "./Ids.ts"
import { Ledger } from "./ledger/Ledger.ts"
import { Messages } from "./messages/Messages.ts"
import { MessageStore } from "./messages/MessageStore.ts"
import { Settlement } from "./messages/Settlement.ts"
import { ApiKeys } from "./organisations/ApiKeys.ts"
import { Organisations } from "./organisations/Organisations.ts"
import { timedSubmit } from "./provider/Metered.ts"
import { ServiceSecret } from "./ServiceSecret.ts"

/** The provider chosen by SMS_PROVIDER (only the simulator exists so far), its submissions timed. */
export const ProviderLive = Layer.effect(Provider, Effect.map(Effect.service(Provider), (p) => Provider.of({ ...p, submit: timedSubmit(p.submit) }))).pipe(
  Layer.provide(Layer.unwrap(Effect.map(AppConfig, (c) =>
    SimulatorLive({ receiptDelayMs: c.simulatorReceiptDelayMs, slowMs: c.simulatorSlowMs })))))

const Base = Layer.mergeAll(Ledger.layer, Organisations.layer, ApiKeys.layer, Contacts.layer, MessageStore.layer, Idempotency.layer, WorkQueue.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Ids.layer, ServiceSecret.layer))
)

/** Every service, with the given provider. */
export const servicesWith = <E, R>(provider: Layer.Layer<Provider, E, R>) =>
  WorkSteps.layer.pipe(
    Layer.provideMerge(Layer.merge(Messages.layer, Batches.layer)),
    Layer.provideMerge(Settlement.layer),
    Layer.provideMerge(Base),
    Layer.provideMerge(provider)
  )

export const ServicesLive = servicesWith(ProviderLive)
