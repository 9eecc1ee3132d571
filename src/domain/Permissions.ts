/** The five capabilities an API key can hold (spec 5.4). */
import { Schema } from "effect"

export const Permissions = ["sms.send", "sms.schedule", "delivery.read", "balance.read", "contacts.manage"] as const
export type Permission = typeof Permissions[number]
export const PermissionSchema = Schema.Literals(Permissions)
