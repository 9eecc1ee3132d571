/**
 * `sms-service-client` (packed from client/): the typed client for integrators of the public API. Build it with
 * `makeSmsClient({ baseUrl, apiKey })` over an HttpClient (e.g. `FetchHttpClient.layer`), call any
 * endpoint through it, or use the helpers that always send an Idempotency-Key and wait for a
 * message's final status. Failures are the spec's error classes (`_tag` = the class name, `error.code`
 * = the spec's code); an invalid payload is refused before it is sent, with a SchemaError.
 */
export { Api } from "../api/Api.ts"
export * from "../api/Schemas.ts"
export * from "../domain/Errors.ts"
export { type Created, createBatch, createWebhook, sendMessage } from "./Creations.ts"
export { MessageNotFinal, type WaitOptions, waitForFinalStatus } from "./Polling.ts"
export { makeSmsClient, type SmsClient, type SmsClientOptions } from "./SmsClient.ts"
