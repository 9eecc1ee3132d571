/**
 * What a OneAPI provider POSTs to the service (docs/operators.md#oneapi-routes): delivery
 * notifications, whose final statuses become receipts, and inbound messages, each one whole
 * message that becomes one IncomingPart (UCS-2, data_coding 8, as docs/two-way.md reads it). Pure.
 */
import { Schema } from "effect"
import { recipientOf, senderOf, TON_INTERNATIONAL, TON_NATIONAL } from "../../domain/InboundAddress.ts"
import type { IncomingPart } from "../Provider.ts"

export const deliveryStatuses = [
  "DeliveredToTerminal",
  "DeliveryImpossible",
  "MessageWaiting",
  "DeliveredToNetwork",
  "DeliveryUncertain",
  "DeliveryNotificationNotSupported"
] as const
export type DeliveryStatus = (typeof deliveryStatuses)[number]

export const ReceiptNotification = Schema.Struct({
  deliveryInfoNotification: Schema.Struct({
    deliveryInfo: Schema.Struct({
      address: Schema.String,
      deliveryStatus: Schema.Literals(deliveryStatuses)
    }),
    callbackData: Schema.String.check(Schema.isNonEmpty())
  })
})
export type ReceiptNotification = typeof ReceiptNotification.Type

export const InboundNotification = Schema.Struct({
  inboundSMSMessageNotification: Schema.Struct({
    inboundSMSMessage: Schema.Struct({
      dateTime: Schema.optionalKey(Schema.String),
      destinationAddress: Schema.String.check(Schema.isNonEmpty()),
      messageId: Schema.optionalKey(Schema.String),
      message: Schema.String,
      senderAddress: Schema.String.check(Schema.isNonEmpty())
    })
  })
})
export type InboundNotification = typeof InboundNotification.Type

/** The outcome a delivery status gives a message; undefined when it is not final (nothing is stored). */
export const receiptOutcome = (status: DeliveryStatus): "delivered" | "undeliverable" | undefined =>
  status === "DeliveredToTerminal" ? "delivered" : status === "DeliveryImpossible" ? "undeliverable" : undefined

const withoutTel = (address: string): string => address.replace(/^tel:/iu, "")

/** UTF-16 big-endian: what data_coding 8 carries (DataCoding.ts reads it back, surrogate pairs whole). */
export const ucs2Octets = (text: string): Uint8Array => {
  const octets = new Uint8Array(text.length * 2)
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    octets[2 * i] = unit >> 8
    octets[2 * i + 1] = unit & 0xff
  }
  return octets
}

/**
 * The part an inbound notification on route `source` is: the sender as E.164 (`+` international,
 * else national), the number it was sent to as the number or short code it names.
 */
export const inboundPart = (source: string, n: InboundNotification): IncomingPart => {
  const m = n.inboundSMSMessageNotification.inboundSMSMessage
  const from = withoutTel(m.senderAddress)
  const to = withoutTel(m.destinationAddress)
  return {
    source,
    from: senderOf(from.startsWith("+") ? TON_INTERNATIONAL : TON_NATIONAL, from),
    to: recipientOf(to.startsWith("+") ? TON_INTERNATIONAL : TON_NATIONAL, to),
    dataCoding: 8,
    position: undefined,
    octets: ucs2Octets(m.message)
  }
}
