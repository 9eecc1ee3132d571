/** The capabilities an API key can hold: the five of docs/integrators.md#authentication and `webhooks.manage` (docs/decisions.md#webhooks). */
import { Schema } from "effect"

export const Permissions = [
  "sms.send",
  "sms.schedule",
  "delivery.read",
  "balance.read",
  "contacts.manage",
  "webhooks.manage"
] as const
export type Permission = (typeof Permissions)[number]
export const PermissionSchema = Schema.Literals(Permissions)
