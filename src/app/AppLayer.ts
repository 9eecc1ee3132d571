/**
 * The composition root: the whole service as one layer, built from its configuration. It says
 * which layer fills each port; two of those layers choose among implementations from the
 * configuration they are given: `providerLayer` (provider/ProviderLayer.ts: the in-process
 * simulator or SMPP) and `databaseLayer` (db/Database.ts: PostgreSQL or the embedded PGlite).
 * What a test swaps is a layer of its own: the database (the SqlClient, with its migrations), the provider (over the inbox it reports
 * to) and the clock (the service's, system or test).
 *
 * `mainLayer` is what `npm start` runs (main.ts): listening first (a busy port stops the start
 * before anything is written), then the database, the services, the background workers, the
 * demo seed of a first start, the routes. `appLayer` is the same service without a listening
 * server, over parts a test chooses; it is what every in-process test calls (`serviceLayer`, its
 * services without the routes, for the tests of the services).
 */
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import type { SqlClient } from "effect/sql"
import { AdminToken } from "../admin/AdminToken.ts"
import { Batches } from "../batches/Batches.ts"
import { clockLayer, type ServiceClock } from "../clock/ServiceClock.ts"
import { type AppConfig, type AppConfigShape, layerConfig } from "../config/Config.ts"
import { ContactStore } from "../contacts/ContactStore.ts"
import { databaseLayer } from "../db/Database.ts"
import { DatabaseHealth } from "../db/DatabaseHealth.ts"
import { Transactions } from "../db/Transactions.ts"
import { Compaction } from "../messages/Compaction.ts"
import { DueWork } from "../dispatch/DueWork.ts"
import { inboxLayer } from "../receipts/Inbox.ts"
import { Receipts } from "../receipts/Receipts.ts"
import { backgroundLoopsLayer } from "../dispatch/BackgroundLoops.ts"
import { WorkSteps } from "../dispatch/WorkSteps.ts"
import { creationAnswersLayer } from "../http/CreationAnswers.ts"
import { nodeServerLayer } from "../http/NodeServer.ts"
import { Idempotency } from "../idempotency/Idempotency.ts"
import { Ids } from "../platform/Ids.ts"
import { JournalPartitions } from "../ledger/JournalPartitions.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { AcceptancesInFlight } from "../messages/AcceptancesInFlight.ts"
import { BindHolderRelay } from "../messages/BindHolderRelay.ts"
import { Erasure } from "../messages/Erasure.ts"
import { Messages } from "../messages/Messages.ts"
import { MessagePartitions } from "../messages/MessagePartitions.ts"
import { MessageQueueStore } from "../messages/MessageQueueStore.ts"
import { MessageStore } from "../messages/MessageStore.ts"
import { QuickAdmission } from "../messages/QuickAdmission.ts"
import { Recovery } from "../messages/Recovery.ts"
import { Settlement } from "../messages/Settlement.ts"
import { Submitter } from "../messages/Submitter.ts"
import { tracingLayer } from "../observability/Tracing.ts"
import { ApiKeys } from "../organisations/ApiKeys.ts"
import { Organisations } from "../organisations/Organisations.ts"
import type { Provider, ProviderInbox } from "../provider/Provider.ts"
import { providerLayer } from "../provider/ProviderLayer.ts"
import { SecretStore } from "../secrets/SecretStore.ts"
import { ServiceSecret } from "../secrets/ServiceSecret.ts"
import { ProcessLease } from "../processes/ProcessLease.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { WebhookStore } from "../webhooks/WebhookStore.ts"
import { webhookPayloadsLayer } from "../http/WebhookPayloads.ts"
import { OptOutStore } from "../consent/OptOutStore.ts"
import { OptOuts } from "../consent/OptOuts.ts"
import { InboundMessages } from "../inbound/InboundMessages.ts"
import { InboundNumbers } from "../inbound/InboundNumbers.ts"
import { Assembler } from "../inbound/Assembler.ts"
import { InboundMessageStore } from "../inbound/InboundMessageStore.ts"
import { InboundNumberStore } from "../inbound/InboundNumberStore.ts"
import { InboundPartStore } from "../inbound/InboundPartStore.ts"
import { InboundRouting } from "../inbound/InboundRouting.ts"
import { Replies } from "../messages/Replies.ts"
import { notifyUntracedLayer } from "../http/NotifyPaths.ts"
import { httpAppLayer, routes } from "./HttpApp.ts"
import { seedLayer } from "./Seed.ts"

/**
 * At start, in the background (a lookup may take a while): one WARN per enabled webhook endpoint
 * whose URL the address rules refuse (registered while they allowed it), so that its failing
 * deliveries are no surprise.
 */
const refusedWebhooksWarningLayer = Layer.effectDiscard(
  Effect.forkScoped(
    Effect.flatMap(Webhooks, (w) => w.warnRefusedEndpoints).pipe(
      Effect.catchCause((cause) => Effect.logWarning("the webhook endpoints' URLs could not be checked", cause))
    )
  )
)

/** The stores and the services that only need them, over the database. */
const Base = Layer.mergeAll(
  AcceptancesInFlight.layer,
  JournalPartitions.layer.pipe(Layer.provideMerge(Ledger.layer)),
  Organisations.layer,
  ApiKeys.layer,
  ContactStore.layer,
  MessageStore.layer,
  MessagePartitions.layer,
  MessageQueueStore.layer,
  Idempotency.layer,
  ProcessLease.layer,
  QuickAdmission.layer,
  DatabaseHealth.layer,
  WebhookStore.layer,
  OptOutStore.layer,
  InboundPartStore.layer,
  InboundMessageStore.layer,
  InboundNumberStore.layer,
  Replies.layer,
  creationAnswersLayer
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(Ids.layer, ServiceSecret.layer.pipe(Layer.provideMerge(SecretStore.layer)), Transactions.layer)
  )
)

/** Every service, with `provider` between the inbox it reports to and the services that submit through it. */
const servicesWith = <E, R>(provider: Layer.Layer<Provider, E, R>) =>
  DueWork.layer.pipe(
    Layer.provideMerge(Layer.merge(WorkSteps.layer, Compaction.layer)),
    // webhook deliveries render their events through the edge's representations (WebhookPayloads)
    Layer.provideMerge(Deliveries.layer.pipe(Layer.provideMerge(webhookPayloadsLayer))),
    Layer.provideMerge(
      Layer.mergeAll(
        Messages.layer,
        Batches.layer,
        Webhooks.layer,
        OptOuts.layer,
        InboundMessages.layer,
        InboundNumbers.layer
      )
    ),
    Layer.provideMerge(Assembler.layer.pipe(Layer.provideMerge(InboundRouting.layer))),
    Layer.provideMerge(Layer.mergeAll(Submitter.layer, Recovery.layer, BindHolderRelay.layer, Erasure.layer)),
    Layer.provideMerge(Settlement.layer),
    Layer.provideMerge(provider),
    Layer.provideMerge(inboxLayer.pipe(Layer.provideMerge(Receipts.layer))),
    Layer.provideMerge(Base)
  )

/** The parts of the service a test may choose: each is a layer. */
export interface AppParts<ED, EP, RP> {
  readonly config: AppConfigShape
  /** The SqlClient, migrated: databaseLayer (DATABASE_URL, else the embedded PGlite), or a test's database. */
  readonly database: Layer.Layer<SqlClient.SqlClient, ED, AppConfig>
  /** The provider over the inbox: providerLayer (SMS_PROVIDER), or a test's wrapping of it. */
  readonly provider: Layer.Layer<Provider, EP, RP>
  /** The service's clock (SMS_CLOCK). */
  readonly clock: Layer.Layer<ServiceClock>
}

/** Services, background workers and the operator token, over the database. */
const coreWith = <ED, EP, RP>(parts: Pick<AppParts<ED, EP, RP>, "database" | "provider">) =>
  backgroundLoopsLayer.pipe(
    Layer.provideMerge(AdminToken.layer),
    Layer.provideMerge(servicesWith(parts.provider)),
    Layer.provideMerge(parts.database)
  )

/** Every service and background worker over `parts`, without routes: what a test of the services runs on. */
export const serviceLayer = <ED, EP, RP extends ProviderInbox | SqlClient.SqlClient | AppConfig>(
  parts: AppParts<ED, EP, RP>
) => coreWith(parts).pipe(Layer.provideMerge(parts.clock), Layer.provideMerge(layerConfig(parts.config)))

/** The service over `parts`, without a listening server: every route and the edge over `serviceLayer`. */
export const appLayer = <ED, EP, RP extends ProviderInbox | SqlClient.SqlClient | AppConfig>(
  parts: AppParts<ED, EP, RP>
) => httpAppLayer.pipe(Layer.provideMerge(serviceLayer(parts)))

/** The service as `npm start` runs it, from its configuration. */
export const mainLayer = (config: AppConfigShape) =>
  HttpRouter.serve(httpAppLayer, { disableLogger: true }).pipe(
    Layer.provide(notifyUntracedLayer),
    Layer.provideMerge(seedLayer),
    Layer.provideMerge(refusedWebhooksWarningLayer),
    Layer.provideMerge(coreWith({ database: databaseLayer, provider: providerLayer })),
    // listening comes first: a busy port stops the start before anything is written (the data
    // directory, the database, the demo organisation); until the routes are served, requests get 503
    Layer.provideMerge(nodeServerLayer(routes, { port: config.port, host: config.host })),
    Layer.provide(layerConfig(config)),
    Layer.provide(loggingLayer(config.logLevel)),
    Layer.provide(clockLayer(config.clock)),
    Layer.provide(tracingLayer(config))
  )
