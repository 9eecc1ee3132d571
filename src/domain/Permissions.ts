/** The capabilities an API key can hold: the five of docs/integrators.md#authentication, `webhooks.manage` (docs/decisions.md#webhooks) and `inbound.read` (docs/two-way.md). */
import { Schema } from "effect"

export const Permissions = [
  "sms.send",
  "sms.schedule",
  "delivery.read",
  "balance.read",
  "contacts.manage",
  "webhooks.manage",
  "inbound.read"
] as const
export type Permission = (typeof Permissions)[number]
export const PermissionSchema = Schema.Literals(Permissions)
