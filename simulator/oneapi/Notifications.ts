/**
 * What the OneAPI simulator POSTs to the service (docs/operators.md#the-oneapi-simulator): a
 * delivery receipt (`deliveryInfoNotification`) to the send's `notifyURL`, and an inbound message
 * (`inboundSMSMessageNotification`) to the inbound URL: SMS_ONEAPI_INBOUND_NOTIFY_URL when set, or
 * else the receipt URL with its `/receipts/<secret>` made `/inbound/<secret>`.
 */

/** Every status a receipt can carry: `DeliveredToNetwork` on the way (when asked for), then a final one. */
export type DeliveryStatus = "DeliveredToNetwork" | "DeliveredToTerminal" | "DeliveryImpossible"

/** A delivery receipt for the recipient `address` (`tel:+261…`). */
export const receiptBody = (address: string, deliveryStatus: DeliveryStatus, callbackData: string | undefined) => ({
  deliveryInfoNotification: {
    deliveryInfo: { address, deliveryStatus },
    ...(callbackData === undefined ? {} : { callbackData })
  }
})

/** An inbound message from the mobile `from` (E.164 with `+`) to `to` (a number, short code or sender name, as given). */
export const inboundBody = (messageId: string, from: string, to: string, text: string, at: Date) => ({
  inboundSMSMessageNotification: {
    inboundSMSMessage: {
      dateTime: at.toISOString(),
      destinationAddress: to,
      messageId,
      message: text,
      senderAddress: `tel:${from}`
    }
  }
})

/** The inbound URL beside a receipt URL ending in `/receipts/<secret>`: the same with `/inbound/<secret>`; undefined for another form. */
export const inboundUrlOf = (notifyUrl: string): string | undefined => {
  try {
    const url = new URL(notifyUrl)
    const path = url.pathname.replace(/\/receipts\/([^/]+)\/?$/, "/inbound/$1")
    if (path === url.pathname) return undefined
    url.pathname = path
    return url.toString()
  } catch {
    return undefined
  }
}

/** `url` as the simulator logs it: a notify URL's secret (the segment after `/receipts/` or `/inbound/`) as `***`. */
export const loggableUrl = (url: string): string => url.replace(/\/(receipts|inbound)\/[^/?#]+/u, "/$1/***")
