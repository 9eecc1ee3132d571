/** Reading a message until its outcome is final (delivered, undeliverable, failed or blocked). */
import { Clock, Data, Duration, Effect } from "effect"
import type { Message } from "../api/Schemas.ts"
import { isFinal } from "../domain/MessageStatus.ts"
import type { SmsClient } from "./SmsClient.ts"

/** The message was still not final when the wait ended; `last` is how it was last read. */
export class MessageNotFinal extends Data.TaggedError("MessageNotFinal")<{ readonly last: typeof Message.Type }> {}

/** How often to read the message and how long to wait for its final status. */
export interface WaitOptions {
  /** Time between two reads (default 2 seconds). */
  readonly interval?: Duration.Input
  /** Give up after this long (default 5 minutes): `accepted` with no receipt, or `unknown`, may last. */
  readonly timeout?: Duration.Input
}

/**
 * Reads the message every `interval` until its status is final and returns it; fails with
 * MessageNotFinal once `timeout` has passed. Time comes from Effect's Clock.
 */
export const waitForFinalStatus = (client: SmsClient, messageId: string, options: WaitOptions = {}) =>
  Effect.gen(function* () {
    const interval = Duration.fromInputUnsafe(options.interval ?? "2 seconds")
    const deadline =
      (yield* Clock.currentTimeMillis) + Duration.toMillis(Duration.fromInputUnsafe(options.timeout ?? "5 minutes"))
    for (;;) {
      const message = yield* client.messages.get({ params: { message_id: messageId } })
      if (isFinal(message.status)) return message
      if ((yield* Clock.currentTimeMillis) + Duration.toMillis(interval) > deadline)
        return yield* new MessageNotFinal({ last: message })
      yield* Effect.sleep(interval)
    }
  })
