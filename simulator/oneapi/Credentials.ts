/**
 * The OneAPI simulator's OAuth 2.0 client credentials (docs/operators.md#the-oneapi-simulator):
 * `POST /oauth/v3/token` with `Authorization: Basic base64(client_id:client_secret)` and the form
 * `grant_type=client_credentials` gets a bearer token; a send carries it as
 * `Authorization: Bearer <token>`.
 */
import { randomBytes } from "node:crypto"
import type { IncomingMessage } from "node:http"
import { hasContentType } from "./Answers.ts"

/** Whether the token request carries these credentials and the client credentials grant. */
export const grantsToken = (req: IncomingMessage, body: string, clientId: string, clientSecret: string): boolean => {
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1]
  if (basic === undefined) return false
  const pair = Buffer.from(basic, "base64").toString("utf8")
  const colon = pair.indexOf(":")
  if (colon < 0 || pair.slice(0, colon) !== clientId || pair.slice(colon + 1) !== clientSecret) return false
  if (!hasContentType(req, "application/x-www-form-urlencoded")) return false
  return new URLSearchParams(body).get("grant_type") === "client_credentials"
}

/** The bearer token a request carries, if any. */
export const bearerOf = (req: IncomingMessage): string | undefined =>
  /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1]

/** A new token: 32 random bytes, base64url. */
export const newToken = (): string => randomBytes(32).toString("base64url")
