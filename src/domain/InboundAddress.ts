/**
 * The addresses of an inbound (mobile-originated) message (docs/two-way.md):
 * the sender as E.164, the number it was sent to as the number or short code it names, and the
 * syntax of the numbers an organisation receives on. Pure.
 */

/** SMPP type of number: international. */
export const TON_INTERNATIONAL = 1
/** SMPP type of number: national (Madagascar's, here). */
export const TON_NATIONAL = 2

/**
 * `source_addr` as the service writes a sender: TON 1 `+<digits>`, TON 2 `+261<digits without a
 * leading 0>`; any other type as it came (without spaces).
 */
export const senderOf = (ton: number, address: string): string => {
  const compact = address.replace(/\s+/gu, "")
  const digits = compact.replace(/^\+/u, "")
  if (!/^\d+$/u.test(digits)) return compact
  if (ton === TON_INTERNATIONAL) return `+${digits}`
  if (ton === TON_NATIONAL) return `+261${digits.replace(/^0/u, "")}`
  return compact
}

/**
 * `destination_addr` as the number it names: a short code (3 to 8 digits) as it is, an
 * international number (TON 1, or written with `+`) as `+<digits>`, a national one (TON 2) as
 * `+261<digits without a leading 0>`; anything else as it came.
 */
export const recipientOf = (ton: number, address: string): string => {
  const compact = address.replace(/\s+/gu, "")
  const digits = compact.replace(/^\+/u, "")
  if (!/^\d+$/u.test(digits) || (/^\d{3,8}$/u.test(compact) && ton !== TON_INTERNATIONAL)) return compact
  if (ton === TON_INTERNATIONAL || compact.startsWith("+")) return `+${digits}`
  if (ton === TON_NATIONAL) return `+261${digits.replace(/^0/u, "")}`
  return compact
}

/** A number that receives messages: a short code of 3 to 8 digits or an E.164 number. */
export const inboundNumberPattern = /^(?:[0-9]{3,8}|\+[1-9][0-9]{6,14})$/u

/** Whether `number` is an inbound number the operator may assign. */
export const isInboundNumber = (number: string): boolean => inboundNumberPattern.test(number)
