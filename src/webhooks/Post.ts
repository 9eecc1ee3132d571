/**
 * One webhook POST through Node's own HTTP client: to the address checked beforehand (the
 * connection never looks the host up again), redirects not followed (Node never does), given up
 * after `timeoutMs`, and at most `responseBytesMax` of the answer kept for the delivery log.
 */
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import type { Target } from "./Addresses.ts"

/** Most bytes of a receiver's answer kept for the delivery log. */
export const responseBytesMax = 4096

export type PostResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string }
  | { readonly _tag: "Failed"; readonly error: string }

/** POSTs `body` with `headers` to `url` at `target`; never rejects. */
export const post = (
  url: URL,
  target: Target,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number
): Promise<PostResult> =>
  new Promise((resolve) => {
    let settled = false
    const finish = (result: PostResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all === true) {
        ;(callback as unknown as (e: null, a: ReadonlyArray<{ address: string; family: number }>) => void)(null, [
          target
        ])
      } else callback(null, target.address, target.family)
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup,
        agent: false
      },
      (res) => {
        const chunks: Array<Buffer> = []
        let kept = 0
        const done = () =>
          finish({ _tag: "Answered", status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
        res.on("data", (chunk: Buffer) => {
          if (kept < responseBytesMax) {
            const part = chunk.subarray(0, responseBytesMax - kept)
            chunks.push(part)
            kept += part.length
          }
          if (kept >= responseBytesMax) {
            done()
            res.destroy()
          }
        })
        res.on("end", done)
        res.on("error", done)
        res.on("close", done)
      }
    )
    const timer = setTimeout(() => {
      finish({ _tag: "Failed", error: `no answer within ${timeoutMs / 1000} s` })
      req.destroy()
    }, timeoutMs)
    req.on("error", (error) => finish({ _tag: "Failed", error: error.message }))
    req.end(body)
  })
