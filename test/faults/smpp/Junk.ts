/**
 * What a hostile SMSC mixes into its stream besides what it owes (the SMPP fuzz): every command
 * id of SMPP 3.4 (and of later versions the `smpp` package knows), requests and responses, ids
 * nobody knows, random octets framed as PDUs, PDUs whose fields are cut, long and empty fields,
 * receipts the adapter cannot read or that match no message; and the PDUs that drop the
 * connection (a `command_length` under 16 or over 16,384, one longer than what follows, an
 * `unbind`). Each item says which answer the adapter owes it, if any.
 */
import smpp from "smpp"
import { rawPdu, type ReceiptOptions, receiptPdu } from "../../support/RawSmsc.ts"
import type { Prng } from "./Prng.ts"

/** The answer the adapter owes a request of ours. */
export type Expectation =
  /** Its response (`command`) with one of these statuses. */
  | { readonly kind: "answer"; readonly command: string; readonly statuses: ReadonlyArray<number> }
  /** A generic_nack with one of these statuses. */
  | { readonly kind: "nack"; readonly statuses: ReadonlyArray<number> }
  /** Its response (`command`) or a generic_nack, whatever the status: what a body of random octets may decode to. */
  | { readonly kind: "some"; readonly command: string }
  /** Nothing (alert_notification, outbind). */
  | { readonly kind: "none" }

/** How a PDU drops the connection. */
export type Killer = "under 16 octets" | "over 16384 octets" | "longer than what follows" | "unbind"

export interface Item {
  /** What it is, for the figures. */
  readonly label: string
  readonly octets: Buffer
  /** A request of ours: its sequence number and the answer it must get. */
  readonly request?: { readonly sequence: number; readonly expect: Expectation }
  /** Drops the connection: what follows it in the write is never read in order. */
  readonly kills?: Killer
}

/** Requests of SMPP 3.4 (and of 5.0 for broadcast_*) by name; the adapter uses deliver_sm, data_sm, enquire_link and unbind. */
const requestIds: Readonly<Record<string, number>> = {
  bind_receiver: 0x01,
  bind_transmitter: 0x02,
  query_sm: 0x03,
  submit_sm: 0x04,
  deliver_sm: 0x05,
  unbind: 0x06,
  replace_sm: 0x07,
  cancel_sm: 0x08,
  bind_transceiver: 0x09,
  outbind: 0x0b,
  enquire_link: 0x15,
  submit_multi: 0x21,
  alert_notification: 0x102,
  data_sm: 0x103,
  broadcast_sm: 0x111,
  query_broadcast_sm: 0x112,
  cancel_broadcast_sm: 0x113
}
/** Requests SMPP 3.4 answers with nothing. */
const unanswered: ReadonlySet<string> = new Set(["alert_notification", "outbind"])
/** Requests an ESME is never sent: generic_nack 0x03. */
const refusedRequests = [
  "bind_receiver",
  "bind_transmitter",
  "bind_transceiver",
  "submit_sm",
  "submit_multi",
  "query_sm",
  "cancel_sm",
  "replace_sm",
  "broadcast_sm",
  "query_broadcast_sm",
  "cancel_broadcast_sm"
] as const
/** Every response; none of ours may match a request of the adapter, but those `wrongAnswerTo` makes. */
export const responseNames = [
  ...Object.keys(requestIds)
    .filter((name) => !unanswered.has(name))
    .map((name) => `${name}_resp`),
  "generic_nack"
] as ReadonlyArray<smpp.CommandName>
const unknownRequestIds = [0x0000_0000, 0x0000_000a, 0x0000_0010, 0x0000_0099, 0x0000_0999, 0x0001_0000, 0x7fff_ffff]
const unknownResponseIds = [0x8000_00ff, 0x8000_0999, 0xffff_ffff]

/** Sequence numbers of the responses we send unasked: far above any the adapter reaches in a run. */
const unaskedSequence = (prng: Prng) => 0x4000_0000 + prng.int(0, 0x3fff_ffff)

/** The octets of `pdu` with a `command_length` of `length`. */
const withLength = (octets: Buffer, length: number): Buffer => {
  const copy = Buffer.from(octets)
  copy.writeUInt32BE(length >>> 0, 0)
  return copy
}

/** The junk menu: one generator per kind (every kind is drawn over a run), and the killers. */
export const makeJunk = (prng: Prng, nextSequence: () => number) => {
  let n = 0
  const junkNumber = () => `+26139${String(n++ % 10_000_000).padStart(7, "0")}`
  const junkReceipt = (o: Partial<ReceiptOptions> = {}) => receiptPdu({ id: `junk-${n++}`, source: junkNumber(), ...o })

  const request = (label: string, pdu: smpp.PDU, expect: Expectation): Item => {
    pdu.sequence_number = nextSequence()
    return { label, octets: pdu.toBuffer(), request: { sequence: pdu.sequence_number, expect } }
  }
  const receipt = (label: string, pdu: smpp.PDU, statuses: ReadonlyArray<number>): Item =>
    request(label, pdu, { kind: "answer", command: `${pdu.command}_resp`, statuses })
  /** Stored receipts may be answered 0x64 when the adapter holds too many at once. */
  const stored = [0, 0x64]
  const ofCommand = (name: string): Expectation =>
    unanswered.has(name) ? { kind: "none" } : { kind: "some", command: `${name}_resp` }

  /** A PDU of each kind, its body cut at a random octet (the command_length says the cut length). */
  const cuttable: ReadonlyArray<() => smpp.PDU> = [
    () => junkReceipt({ tlvs: true }),
    () => junkReceipt({ dataSm: true }),
    () => new smpp.PDU("submit_sm", { destination_addr: "261341234567", short_message: Buffer.from("cut submit") }),
    () => new smpp.PDU("query_sm", { message_id: "12345" }),
    () => new smpp.PDU("bind_transceiver", { system_id: "sim", password: "sim", interface_version: 0x34 }),
    () => new smpp.PDU("replace_sm", { message_id: "1", short_message: Buffer.from("replace") }),
    () => new smpp.PDU("alert_notification", { source_addr: "261341234567", esme_addr: "DEMO" })
  ]

  const menu: ReadonlyArray<{ readonly label: string; readonly make: () => Item }> = [
    ...refusedRequests.map((name) => ({
      label: `request ${name}`,
      make: () => request(`request ${name}`, new smpp.PDU(name), { kind: "nack", statuses: [0x03] })
    })),
    ...(["alert_notification", "outbind"] as const).map((name) => ({
      label: `request ${name}`,
      make: () => request(`request ${name}`, new smpp.PDU(name), { kind: "none" })
    })),
    {
      label: "request enquire_link",
      make: () =>
        request("request enquire_link", new smpp.PDU("enquire_link"), {
          kind: "answer",
          command: "enquire_link_resp",
          statuses: [0]
        })
    },
    ...responseNames.map((name) => ({
      label: `unasked ${name}`,
      make: (): Item => ({
        label: `unasked ${name}`,
        octets: new smpp.PDU(name, {
          sequence_number: unaskedSequence(prng),
          command_status: prng.pick([0, 0, 0x08, 0x45])
        }).toBuffer()
      })
    })),
    {
      label: "request of an unknown id",
      make: () => {
        const sequence = nextSequence()
        return {
          label: "request of an unknown id",
          octets: rawPdu(prng.pick(unknownRequestIds), sequence, prng.bytes(prng.int(0, 40))),
          request: { sequence, expect: { kind: "nack", statuses: [0x03, 0x08] } }
        }
      }
    },
    {
      label: "response of an unknown id",
      make: () => ({
        label: "response of an unknown id",
        octets: rawPdu(prng.pick(unknownResponseIds), unaskedSequence(prng), prng.bytes(prng.int(0, 40)))
      })
    },
    {
      label: "random octets framed as a request",
      make: () => {
        const name = prng.pick(Object.keys(requestIds).filter((x) => x !== "unbind"))
        const sequence = nextSequence()
        return {
          label: "random octets framed as a request",
          octets: rawPdu(requestIds[name]!, sequence, prng.bytes(prng.int(0, 300))),
          request: { sequence, expect: ofCommand(name) }
        }
      }
    },
    {
      label: "random octets framed as a response",
      make: () => ({
        label: "random octets framed as a response",
        octets: rawPdu(
          (requestIds[prng.pick(Object.keys(requestIds))]! | 0x8000_0000) >>> 0,
          unaskedSequence(prng),
          prng.bytes(prng.int(0, 300))
        )
      })
    },
    {
      label: "fields cut",
      make: () => {
        const pdu = prng.pick(cuttable)()
        pdu.sequence_number = nextSequence()
        const whole = pdu.toBuffer()
        const cut = prng.int(17, whole.length - 1)
        return {
          label: "fields cut",
          octets: withLength(whole.subarray(0, cut), cut),
          request: { sequence: pdu.sequence_number, expect: ofCommand(pdu.command) }
        }
      }
    },
    {
      label: "receipt id with NUL (UCS-2)",
      make: () =>
        receipt(
          "receipt id with NUL (UCS-2)",
          receiptPdu({ id: `12\u0000${n++}`, source: junkNumber(), ucs2: true }),
          [0]
        )
    },
    {
      label: "receipt id not ASCII (UCS-2)",
      make: () =>
        receipt("receipt id not ASCII (UCS-2)", receiptPdu({ id: `é${n++}日`, source: junkNumber(), ucs2: true }), [0])
    },
    {
      label: "receipt id of 66 characters",
      make: () =>
        receipt(
          "receipt id of 66 characters",
          receiptPdu({ id: "6".repeat(66), source: junkNumber(), inPayload: true }),
          [0]
        )
    },
    {
      label: "receipt id of 300 characters",
      make: () =>
        receipt(
          "receipt id of 300 characters",
          receiptPdu({ id: "3".repeat(300), source: junkNumber(), inPayload: true, tlvs: prng.chance(0.5) }),
          [0]
        )
    },
    {
      label: "receipt id empty",
      make: () => receipt("receipt id empty", receiptPdu({ id: "", source: junkNumber() }), [0])
    },
    {
      label: "receipt of an unknown state",
      make: () =>
        receipt("receipt of an unknown state", junkReceipt({ stat: prng.pick(["BOGUS", "DELIVERED", "X"]) }), [0])
    },
    {
      label: "receipt not final",
      make: () =>
        receipt(
          "receipt not final",
          junkReceipt({ stat: prng.pick(["ENROUTE", "ACCEPTD", "UNKNOWN"]), tlvs: prng.chance(0.5) }),
          [0]
        )
    },
    {
      label: "receipt of no message",
      make: () => receipt("receipt of no message", junkReceipt({ tlvs: prng.chance(0.5) }), stored)
    },
    {
      label: "receipt of no message, no number",
      make: () => receipt("receipt of no message, no number", junkReceipt({ source: "DEMO" }), stored)
    },
    {
      label: "receipt of no message in message_payload",
      make: () => receipt("receipt of no message in message_payload", junkReceipt({ inPayload: true }), stored)
    },
    {
      label: "receipt of no message in data_sm",
      make: () => receipt("receipt of no message in data_sm", junkReceipt({ dataSm: true }), stored)
    },
    {
      label: "receipt with a 5000-octet text",
      make: () => {
        const pdu = junkReceipt({ inPayload: true })
        pdu.message_payload = Buffer.concat([pdu.message_payload as Buffer, Buffer.alloc(5000, "x")])
        return receipt("receipt with a 5000-octet text", pdu, stored)
      }
    },
    {
      label: "receipt from a 40-digit source_addr",
      make: () => receipt("receipt from a 40-digit source_addr", junkReceipt({ source: "1".repeat(40) }), stored)
    },
    {
      label: "mobile-originated deliver_sm",
      make: () =>
        receipt(
          "mobile-originated deliver_sm",
          new smpp.PDU("deliver_sm", {
            source_addr: junkNumber().slice(1),
            esm_class: 0,
            short_message: Buffer.from("hello")
          }),
          [0]
        )
    },
    {
      label: "mobile-originated data_sm",
      make: () =>
        receipt(
          "mobile-originated data_sm",
          new smpp.PDU("data_sm", {
            source_addr: junkNumber().slice(1),
            esm_class: 0,
            message_payload: Buffer.from("hello")
          }),
          [0]
        )
    },
    {
      label: "deliver_sm of empty fields",
      make: () => receipt("deliver_sm of empty fields", new smpp.PDU("deliver_sm"), [0])
    }
  ]

  const killers: Readonly<Record<Killer, () => Item>> = {
    "under 16 octets": () => ({
      label: "killer",
      kills: "under 16 octets",
      octets: Buffer.concat([withLength(Buffer.alloc(4), prng.int(0, 15)), prng.bytes(prng.int(0, 30))])
    }),
    "over 16384 octets": () => ({
      label: "killer",
      kills: "over 16384 octets",
      octets: withLength(
        rawPdu(0x05, unaskedSequence(prng), prng.bytes(prng.int(0, 60))),
        prng.pick([16_385, 65_536, prng.int(16_385, 0xffff_ffff), 0xffff_ffff])
      )
    }),
    "longer than what follows": () => {
      const whole = junkReceipt().toBuffer()
      return {
        label: "killer",
        kills: "longer than what follows",
        octets: withLength(whole, whole.length + prng.int(1, 400))
      }
    },
    unbind: () => ({
      ...request("killer", new smpp.PDU("unbind"), { kind: "answer", command: "unbind_resp", statuses: [0] }),
      kills: "unbind"
    })
  }

  return { menu, killers }
}

/** A response of the wrong command carrying the sequence number of a pending submit_sm: it must settle nothing. */
export const wrongAnswerTo = (prng: Prng, sequence: number): smpp.PDU =>
  new smpp.PDU(prng.pick(responseNames.filter((name) => name !== "submit_sm_resp" && name !== "generic_nack")), {
    sequence_number: sequence,
    message_id: "WRONG-COMMAND"
  })

/**
 * After a PDU longer than what follows, the adapter reads the next PDUs' octets as its body and
 * then frames garbage: octets 0xff up to the longest PDU and beyond make sure it soon reads a
 * `command_length` over 16,384 (at a frame boundary) and drops the connection.
 */
export const desyncFlood = (): Buffer => Buffer.alloc(16_384 + 4 + 16, 0xff)
