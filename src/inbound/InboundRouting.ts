/**
 * Which organisation an inbound message goes to (docs/two-way.md),
 * in order: the number it was sent to is dedicated to one; the number is shared and the text
 * names a keyword held on it (`STOP <KEYWORD>` like `<KEYWORD> STOP`); a reply to the
 * organisation that last sent to its sender under that number within 30 days; else none (kept
 * unrouted). `in_reply_to` is that last message of the organisation it goes to, however it was routed.
 */
import { Context, Effect, Layer } from "effect"
import type { Fails } from "../db/DatabaseUnavailable.ts"
import { keywordOf } from "../domain/Keywords.ts"
import { Replies, replyWindowMs } from "../messages/Replies.ts"
import { InboundNumberStore } from "./InboundNumberStore.ts"

export interface Route {
  readonly organisationId: string | null
  /** The keyword the message was routed by, normalised; null when it was not. */
  readonly keyword: string | null
  /** The message of that organisation it answers, if any. */
  readonly inReplyTo: string | null
}

export class InboundRouting extends Context.Service<
  InboundRouting,
  {
    /** Where a message from `from` to `to` saying `text`, received at `at`, goes. */
    readonly route: (from: string, to: string, text: string, at: Date) => Fails<Route>
  }
>()("sms/InboundRouting") {
  static readonly layer = Layer.effect(
    InboundRouting,
    Effect.gen(function* () {
      const numbers = yield* InboundNumberStore
      const replies = yield* Replies
      return InboundRouting.of({
        route: Effect.fn("InboundRouting.route")(function* (from, to, text, at) {
          const since = new Date(at.getTime() - replyWindowMs)
          const holdings = yield* numbers.holdings(to)
          const dedicated = holdings.find((h) => h.keyword === "")
          const keyword =
            dedicated === undefined
              ? keywordOf(
                  text,
                  holdings.map((h) => h.keyword)
                )
              : undefined
          const byNumber = dedicated ?? holdings.find((h) => keyword !== undefined && h.keyword === keyword)
          if (byNumber !== undefined) {
            const answered = yield* replies.lastSentTo(from, to, since, byNumber.organisationId)
            return {
              organisationId: byNumber.organisationId,
              keyword: keyword ?? null,
              inReplyTo: answered?.id ?? null
            }
          }
          const answered = yield* replies.lastSentTo(from, to, since)
          return { organisationId: answered?.organisationId ?? null, keyword: null, inReplyTo: answered?.id ?? null }
        })
      })
    })
  )
}
