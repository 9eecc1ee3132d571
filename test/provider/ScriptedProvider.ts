/** A `Provider` whose submissions and queries a test scripts; the rest answers as a provider with no route, cap or bind. */
import { Effect } from "effect"
import { Provider, type QueryResult, type Submission, type SubmitResult } from "../../src/provider/Provider.ts"

export const scriptedProvider = (
  submit: (s: Submission) => Effect.Effect<SubmitResult>,
  query: () => Effect.Effect<QueryResult> = () => Effect.succeed({ _tag: "Unknown" }),
  submitDeadlineMs = 1500
): typeof Provider.Service =>
  Provider.of({
    submit,
    query,
    health: Effect.succeed([]),
    routeOf: () => undefined,
    sendable: () => ({ _tag: "All" }),
    pace: () => Effect.void,
    paced: false,
    submitDeadlineMs,
    ratePerSecond: undefined
  })
