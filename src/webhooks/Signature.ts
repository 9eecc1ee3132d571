/** Standard Webhooks 1.0 signatures: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` under the base64-decoded secret. */
import { createHmac } from "node:crypto"

/** The signature of one message under one `whsec_` secret. */
export const signature = (secret: string, id: string, timestamp: number, body: string): string => {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`
}

/** The `webhook-signature` header: one signature per secret that signs, space-separated. */
export const signatureHeader = (secrets: ReadonlyArray<string>, id: string, timestamp: number, body: string): string =>
  secrets.map((s) => signature(s, id, timestamp, body)).join(" ")
