/**
 * What only the in-process simulator can do besides being a provider: send the receipts it owes
 * when the test clock says they are due, and send a receipt on the operator's demand. An optional
 * port: the test clock's `advance` and the operator's receipt route ask for it, and do without
 * it when the provider is a real one.
 */
import { Context, type Effect } from "effect"
import type { DatabaseUnavailable } from "../db/DatabaseUnavailable.ts"
import type { InboxUnavailable } from "./Provider.ts"

export class SimulatorControl extends Context.Service<
  SimulatorControl,
  {
    /** Sends every receipt due by the clock's now; returns how many it sent. */
    readonly runDue: Effect.Effect<number, DatabaseUnavailable>
    /** When the next receipt falls due after `after`, if any (one due by then and not sent is not waited on). */
    readonly nextDue: (after: Date) => Effect.Effect<Date | undefined, DatabaseUnavailable>
    /**
     * Makes the simulated provider send a receipt now for a message it accepted, whatever its test
     * number said; false when the simulator never accepted that message.
     */
    readonly sendReceipt: (
      organisationId: string,
      messageId: string,
      outcome: "delivered" | "undeliverable"
    ) => Effect.Effect<boolean, DatabaseUnavailable>
    /**
     * Forgets at most `limit` messages whose receipt was sent before `before` (nothing asks the
     * simulator about a message once it has its outcome); returns how many.
     */
    readonly compact: (before: Date, limit: number) => Effect.Effect<number, DatabaseUnavailable>
    /**
     * Makes the simulated provider send an MO from `from` to `to` saying `text` now: its parts are
     * stored through the inbox (docs/two-way.md).
     */
    readonly sendInbound: (from: string, to: string, text: string) => Effect.Effect<void, InboxUnavailable>
  }
>()("sms/SimulatorControl") {}
