/** The capabilities an API key can hold: the five of spec 5.4, and `webhooks.manage` (contract section 10). */
import { Schema } from "effect"

export const Permissions = ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage", "webhooks.manage"] as const
export type Permission = typeof Permissions[number]
export const PermissionSchema = Schema.Literals(Permissions)
