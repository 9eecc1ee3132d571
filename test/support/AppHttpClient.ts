/** An Effect HttpClient whose requests go to an in-process app's fetch-style handler (no port). */
import { Layer } from "effect"
import { FetchHttpClient, type HttpClient } from "effect/http"

/** FetchHttpClient over `handler`: every request the client builds is answered by the app. */
export const appHttpClient = (handler: (request: Request) => Promise<Response>): Layer.Layer<HttpClient.HttpClient> =>
  FetchHttpClient.layer.pipe(
    Layer.provide(Layer.succeed(FetchHttpClient.Fetch)((input, init) => handler(new Request(input, init))))
  )
