/**
 * What the creation of an endpoint answers over HTTP (its 201 with the secret, known before
 * anything is written), and so what its Idempotency-Key stores and replays. A port: the webhooks
 * module declares it, the edge encodes it (http/CreationAnswers.ts).
 */
import { Context } from "effect"
import type { Answer } from "../idempotency/Answer.ts"
import type { EndpointRow } from "./WebhookStore.ts"

export class WebhookAnswers extends Context.Service<
  WebhookAnswers,
  {
    /** The answer of the creation of `endpoint`, the only one that shows its `secret`. */
    readonly answer: (endpoint: EndpointRow, secret: string) => Answer
  }
>()("sms/WebhookAnswers") {}
