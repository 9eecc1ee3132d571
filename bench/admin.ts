/**
 * How the harness sets up its organisations. Through the operator API (`/admin/v1`, with the
 * service's operator token), `createOrg` makes an organisation with the sender INFO, an API key and,
 * when asked, a grant of credits (which the service may store as several lots). With SQL instead of
 * the API, `oneLotGrant` writes credits straight into `credit_lots` and `credit_entries` as one lot
 * with its grant entry (the scenarios that seed messages with SQL write their reservations into
 * that lot), and `firstLotOf` reads an organisation's first lot; both only build the statement,
 * which the caller runs (bench/run.ts, bench/experiments.ts). Nothing here sets a retention:
 * scenario 16 sets its organisation's in SQL (bench/scenarios/retention.ts).
 */
import type { Service } from "./service.ts"

export interface BenchOrg {
  readonly id: string
  readonly keyId: string
  readonly apiKey: string
  readonly sender: string
}

const call = async (
  service: Service,
  method: string,
  path: string,
  body: unknown
): Promise<Record<string, unknown>> => {
  const res = await fetch(`${service.base}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = (await res.json()) as Record<string, unknown>
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

/** An organisation with the sender INFO, a key with every permission (and `extra` ones) and `credits` never-expiring credits (none when 0), granted through the operator API. */
export const createOrg = async (
  service: Service,
  name: string,
  credits: number,
  extra: ReadonlyArray<string> = []
): Promise<BenchOrg> => {
  const org = await call(service, "POST", "/organizations", { name, default_sender_name: "INFO" })
  const id = String(org["id"])
  const key = await call(service, "POST", `/organizations/${id}/api-keys`, {
    permissions: ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage", ...extra]
  })
  if (credits > 0) await call(service, "POST", `/organizations/${id}/credits`, { amount: credits })
  return { id, keyId: String(key["key_id"]), apiKey: String(key["api_key"]), sender: "INFO" }
}

/** SQL granting `credits` to an organisation as one lot with its grant entry; returns the lot's id. */
export const oneLotGrant = (organisationId: string, credits: number): string =>
  `WITH lot AS (
    INSERT INTO credit_lots (organisation_id, amount, valid_until, created_at)
    VALUES ('${organisationId}', ${credits}, NULL, now()) RETURNING organisation_id, id, amount)
  INSERT INTO credit_entries (organisation_id, lot_id, kind, amount, at)
  SELECT organisation_id, id, 'grant', amount, now() FROM lot RETURNING lot_id`

/** SQL reading the organisation's first lot (the lowest id). */
export const firstLotOf = (organisationId: string): string =>
  `SELECT min(id) FROM credit_lots WHERE organisation_id = '${organisationId}'`
