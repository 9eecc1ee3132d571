/** Inbound messages in tests: parts fed to the app's inbox as a provider would, and the rows they become. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { partOf } from "../../src/domain/InboundParts.ts"
import { type IncomingPart, ProviderInbox } from "../../src/provider/Provider.ts"
import { type MoPdu, moPdus, type PartForm } from "../../simulator/smsc/MoParts.ts"

/** The part a provider passes on for one PDU of the SMSC. */
export const partOfPdu = (pdu: MoPdu, from: string, to: string, source = "test"): IncomingPart => {
  const part = partOf({
    hasHeader: (pdu.esm_class & 0x40) !== 0,
    shortMessage: pdu.short_message,
    messagePayload: pdu.message_payload,
    sar: { refNum: pdu.sar_msg_ref_num, totalSegments: pdu.sar_total_segments, segmentSeqnum: pdu.sar_segment_seqnum }
  })
  if (part === undefined) throw new Error("unreadable part")
  return { source, from, to, dataCoding: pdu.data_coding, position: part.position, octets: part.octets }
}

/** The parts of `text` from `from` to `to`, in `form` (a whole message when it fits). */
export const partsOf = (text: string, from: string, to: string, form: PartForm = "udh8", ref = 7) =>
  moPdus(text, form, ref).map((pdu) => partOfPdu(pdu, from, to))

/** Stores parts through the app's inbox, in order. */
export const receive = (parts: ReadonlyArray<IncomingPart>) =>
  Effect.gen(function* () {
    const inbox = yield* ProviderInbox
    for (const part of parts) yield* inbox.mobileOriginated(part)
  })

export interface InboundRow {
  readonly id: string
  readonly organisationId: string | null
  readonly fromNumber: string
  readonly toNumber: string
  readonly text: string
  readonly keyword: string | null
  readonly segments: number
  readonly incomplete: boolean
  readonly inReplyTo: string | null
  readonly routed: boolean
}

/** The inbound messages from `from`, oldest first. */
export const inboundFrom = (from: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<InboundRow>`SELECT id::text, organisation_id::text, from_number, to_number, text, keyword, segments,
      incomplete, in_reply_to::text, routed FROM inbound_messages WHERE from_number = ${from} ORDER BY received_at, id`
  )

/** A sender no other test uses: `+2613300` and five digits. */
let senders = 0
export const newSender = () =>
  `+2613300${String(process.pid % 1000).padStart(3, "0")}${String(++senders).padStart(2, "0")}`

/** The organisation's opt-outs, straight from the table. */
export const optOutsOfOrg = (orgId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ phoneNumber: string; source: string; inboundMessageId: string | null }>`SELECT phone_number, source,
        inbound_message_id::text FROM opt_outs WHERE organisation_id = ${orgId} ORDER BY created_at, phone_number`
  )
