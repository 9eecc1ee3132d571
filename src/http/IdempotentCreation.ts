/**
 * An idempotent creation (docs/integrators.md#idempotency) at the edge, the one way a creation route runs: the request's
 * fingerprint (an HMAC of its route and canonical body), the creation run under its
 * Idempotency-Key, and its answer written as the response, with `Idempotent-Replayed: true` when
 * it is the one stored for the key. The key is claimed, and its answer stored, inside the
 * creation's own transactions (its admission, its settlement), so that no crash ever separates a
 * status from the answer that reports it; the answers are encoded by CreationAnswers.ts.
 */
import { Effect } from "effect"
import type { Answer } from "../idempotency/Answer.ts"
import { Idempotency, type Route } from "../idempotency/Idempotency.ts"
import { answerResponse } from "./Answers.ts"

/** What a creation gives back: the answer it gave or stored, and whether it was a replay of the stored one. */
export interface Created {
  readonly answer: Answer
  readonly replayed: boolean
}

/** Runs `create` with the request's fingerprint and writes its answer as the response. */
export const idempotentCreation = <E, R>(
  route: Route,
  payload: unknown,
  create: (fingerprint: string) => Effect.Effect<Created, E, R>
) =>
  Effect.gen(function* () {
    const { answer, replayed } = yield* create((yield* Idempotency).fingerprint(route, payload))
    return answerResponse(answer, replayed)
  })
