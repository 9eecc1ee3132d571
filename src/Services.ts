/** The service graph over a SqlClient and the configuration: every service the handlers and workers use. */
import { Layer } from "effect"
import { Batches } from "./batches/Batches.ts"
import { Contacts } from "./contacts/Contacts.ts"
import { DueWork } from "./dispatch/DueWork.ts"
import { InboxLive } from "./dispatch/Inbox.ts"
import { Receipts } from "./dispatch/Receipts.ts"
import { WorkQueue } from "./dispatch/WorkQueue.ts"
import { WorkSteps } from "./dispatch/WorkSteps.ts"
import { Idempotency } from "./idempotency/Idempotency.ts"
import { Ids } from "./Ids.ts"
import { Ledger } from "./ledger/Ledger.ts"
import { Messages } from "./messages/Messages.ts"
import { MessageStore } from "./messages/MessageStore.ts"
import { QuickAdmission } from "./messages/QuickAdmission.ts"
import { Recovery } from "./messages/Recovery.ts"
import { Settlement } from "./messages/Settlement.ts"
import { Submitter } from "./messages/Submitter.ts"
import { ApiKeys } from "./organisations/ApiKeys.ts"
import { Organisations } from "./organisations/Organisations.ts"
import type { Provider } from "./provider/Provider.ts"
import { ProviderLive } from "./provider/ProviderLayer.ts"
import { ServiceSecret } from "./ServiceSecret.ts"
import { WorkerLease } from "./WorkerLease.ts"

const Base = Layer.mergeAll(
  Ledger.layer,
  Organisations.layer,
  ApiKeys.layer,
  Contacts.layer,
  MessageStore.layer,
  Idempotency.layer,
  WorkQueue.layer,
  WorkerLease.layer,
  QuickAdmission.layer
).pipe(Layer.provideMerge(Layer.mergeAll(Ids.layer, ServiceSecret.layer)))

/** The receipt store and the inbox providers report to. */
const InboxAndReceipts = InboxLive.pipe(Layer.provideMerge(Receipts.layer))

/** Every service, with the given provider layer (which may use the inbox). */
export const servicesWith = <ROut extends Provider, E, R>(provider: Layer.Layer<ROut, E, R>) =>
  DueWork.layer.pipe(
    Layer.provideMerge(WorkSteps.layer),
    Layer.provideMerge(Layer.merge(Messages.layer, Batches.layer)),
    Layer.provideMerge(Layer.merge(Submitter.layer, Recovery.layer)),
    Layer.provideMerge(Settlement.layer),
    Layer.provideMerge(provider),
    Layer.provideMerge(InboxAndReceipts),
    Layer.provideMerge(Base)
  )

export const ServicesLive = servicesWith(ProviderLive)
