/**
 * What the creation of a batch answers over HTTP (its 202, known before anything is written), and
 * so what its Idempotency-Key stores and replays: encoded by the HTTP edge through the API's
 * declared schemas (http/CreationAnswers.ts). A port: the batches module declares it, the edge
 * provides it.
 */
import { Context } from "effect"
import type { Answer } from "../idempotency/Answer.ts"
import type { BatchView } from "./Batch.ts"

export class BatchAnswers extends Context.Service<
  BatchAnswers,
  {
    /** The answer of the creation of `batch` (its counts as admitted: every member scheduled). */
    readonly answer: (batch: BatchView) => Answer
  }
>()("sms/BatchAnswers") {}
