/** Malagasy mobile numbers in E.164 form: the only recipients the service accepts (docs/integrators.md#phone-numbers). */
import { Schema } from "effect"

/** (`u`: lets the OpenAPI document carry the pattern.) */
export const phonePattern = /^\+2613[0-9]{8}$/u

/** A Malagasy mobile number, exactly `+2613` followed by 8 digits. */
export const PhoneNumber = Schema.String.check(
  Schema.isPattern(phonePattern, { message: "must be a Malagasy mobile number: +2613 followed by 8 digits" })
).annotate({ description: "Malagasy mobile number in E.164 form", examples: ["+261340000001"] })

/** Hides all but the operator prefix and the last two digits, for logs: `+26134*****01`; `***` under 8 characters. */
export const maskPhone = (phone: string): string =>
  phone.length < 8 ? "***" : `${phone.slice(0, 6)}${"*".repeat(phone.length - 8)}${phone.slice(-2)}`
