// The README's client example: send a message, replay it with the same key, wait for its final status.
// Run: SMS_URL=http://127.0.0.1:8080 SMS_API_KEY=svc_sms_... node send-sms.ts
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { makeSmsClient, sendMessage, waitForFinalStatus } from "sms-service-client"

const program = Effect.gen(function* () {
  const client = yield* makeSmsClient({
    baseUrl: process.env.SMS_URL ?? "http://127.0.0.1:8080",
    apiKey: process.env.SMS_API_KEY!
  })
  const order = { to: "+261340000001", text: "Salama! Your order 1234 has shipped." }

  // The key names the operation: after a timeout or a lost answer, retry with the same key and body.
  const sent = yield* sendMessage(client, "order-1234-sms", order)
  const again = yield* sendMessage(client, "order-1234-sms", order)
  console.log(sent.status, sent.body.id, again.replayed, again.body.id === sent.body.id) // 201 <id> true true

  const final = yield* waitForFinalStatus(client, sent.body.id, { interval: "1 second", timeout: "1 minute" })
  console.log(final.status, final.delivery_time) // delivered <time>

  const balance = yield* client.balance.get() // any endpoint, typed
  console.log(balance.available)
}).pipe(
  Effect.catchTag("IdempotencyConflict", (e) => Effect.logError(`same key, other content: ${e.error.message}`)),
  Effect.provide(FetchHttpClient.layer)
)

Effect.runPromise(program)
