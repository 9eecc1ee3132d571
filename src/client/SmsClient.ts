/**
 * The typed client of the public API (spec v2.0.2), derived from its HttpApi definition: one method
 * per endpoint, grouped as the API is (`balance`, `contacts`, `messages`, `message-batches`, `webhooks`), with
 * the spec's error classes as typed failures. A renamed route, field or error breaks its callers'
 * build.
 */
import type { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../api/Api.ts"

/** Every endpoint of the public API as a typed method. */
export type SmsClient = HttpApiClient.ForApi<typeof Api>

/** Where the service is and the organisation's API key. */
export interface SmsClientOptions {
  /** Where the service answers, e.g. `http://127.0.0.1:8080` (the routes carry `/api/sms/v2`). */
  readonly baseUrl: string | URL
  /** `svc_sms_<key_id>.<secret>`, sent on every call as `Authorization: Bearer`. */
  readonly apiKey: string | Redacted.Redacted<string>
}

/** Builds the typed client over the given HttpClient, every request carrying the API key. */
export const makeSmsClient = (options: SmsClientOptions): Effect.Effect<SmsClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey))
  })
