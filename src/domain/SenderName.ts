/** Sender names: 1 to 11 ASCII letters, digits or internal spaces (docs/integrators.md#messages). */
import { Schema } from "effect"

/** (`u`: lets the OpenAPI document carry the pattern.) */
export const senderNamePattern = /^[A-Za-z0-9](?:[A-Za-z0-9 ]{0,9}[A-Za-z0-9])?$/u

/** True when `name` is an acceptable sender name. */
export const isValidSenderName = (name: string): boolean => senderNamePattern.test(name)

/** Schema of a sender name; failures read as a plain validation message. */
export const SenderName = Schema.String.check(
  Schema.isPattern(senderNamePattern, { message: "must be 1 to 11 ASCII letters, digits or internal spaces" })
)
