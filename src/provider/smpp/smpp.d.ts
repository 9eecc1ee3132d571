/**
 * Types of the `smpp` package (0.5.1, untyped JavaScript), limited to what this project uses:
 * the client session, the server, PDUs and the fields of the PDUs the adapter and the SMSC
 * simulator read or write.
 */
declare module "smpp" {
  import type { EventEmitter } from "node:events"
  import type { Server as NetServer, Socket } from "node:net"

  namespace smpp {
    /** A command of SMPP 3.4 (and broadcast_* of 5.0): the project sends and answers a few; its tests send them all. */
    type CommandName =
      | "bind_receiver"
      | "bind_receiver_resp"
      | "bind_transmitter"
      | "bind_transmitter_resp"
      | "bind_transceiver"
      | "bind_transceiver_resp"
      | "submit_sm"
      | "submit_sm_resp"
      | "submit_multi"
      | "submit_multi_resp"
      | "deliver_sm"
      | "deliver_sm_resp"
      | "query_sm"
      | "query_sm_resp"
      | "cancel_sm"
      | "cancel_sm_resp"
      | "replace_sm"
      | "replace_sm_resp"
      | "broadcast_sm"
      | "broadcast_sm_resp"
      | "query_broadcast_sm"
      | "query_broadcast_sm_resp"
      | "cancel_broadcast_sm"
      | "cancel_broadcast_sm_resp"
      | "enquire_link"
      | "enquire_link_resp"
      | "unbind"
      | "unbind_resp"
      | "generic_nack"
      | "data_sm"
      | "data_sm_resp"
      | "alert_notification"
      | "outbind"

    /**
     * `short_message` as the package decodes it on reading: the user data header split into its
     * information elements when `esm_class` has 0x40, and the text decoded by `data_coding`
     * (GSM 03.38 for 0, UTF-16BE for 8; the raw octets for codings it does not know).
     */
    interface DecodedShortMessage {
      readonly udh?: ReadonlyArray<Buffer>
      readonly message: string | Buffer
    }

    /** The fields of the PDUs used here; which are present depends on the command. */
    interface PduFields {
      system_id?: string
      password?: string
      interface_version?: number
      source_addr_ton?: number
      source_addr_npi?: number
      source_addr?: string
      dest_addr_ton?: number
      dest_addr_npi?: number
      destination_addr?: string
      /** alert_notification's ESME address. */
      esme_addr?: string
      esm_class?: number
      registered_delivery?: number
      data_coding?: number
      /** Written as raw octets (a Buffer is sent as it is, UDH included); read as decoded. */
      short_message?: Buffer | DecodedShortMessage
      message_id?: string
      message_state?: number
      /** TLVs 0x020C, 0x020E, 0x020F: the place of a part of a long message (SAR). */
      sar_msg_ref_num?: number
      sar_total_segments?: number
      sar_segment_seqnum?: number
      final_date?: string
      error_code?: number
      /** alert_notification: the ESME the alert is for. */
      esme_addr?: string
      /** TLV 0x001E. */
      receipted_message_id?: string
      /** TLV 0x0424: the text of a `data_sm`, or of a `deliver_sm` whose short_message is empty; read as decoded. */
      message_payload?: Buffer | DecodedShortMessage
    }

    interface PduOptions extends PduFields {
      command_status?: number
      sequence_number?: number
    }

    /** A PDU: its header, and the fields of its command (declared by merging with PduFields). */
    interface PDU extends PduFields {}
    class PDU {
      constructor(command: CommandName, options?: PduOptions)
      /** Decodes a whole PDU (header included); throws on a body it cannot read. */
      constructor(octets: Buffer)
      /** The command's name, `"unknown"` for an id the package does not know. */
      readonly command: string
      readonly command_id: number
      command_status: number
      /** Set by `Session.send` for a request that has none. */
      sequence_number: number
      isResponse(): boolean
      /** The response PDU to this request, with its sequence number; throws for a command that has none. */
      response(options?: PduOptions): PDU
      /** The PDU's octets; throws on a field it cannot encode. */
      toBuffer(): Buffer
    }

    class Session extends EventEmitter {
      readonly socket: Socket
      /** Writes a PDU (numbering a request); false when the socket is no longer writable. */
      send(pdu: PDU): boolean
      /** Ends the socket after what was written. */
      close(callback?: () => void): void
      /** Destroys the socket at once. */
      destroy(callback?: () => void): void
      on(event: "pdu", listener: (pdu: PDU) => void): this
      on(event: "connect" | "close", listener: () => void): this
      on(event: "error", listener: (error: Error & { readonly code?: string }) => void): this
    }

    interface Server extends NetServer {
      readonly sessions: ReadonlyArray<Session>
    }

    /** Opens a TCP connection to an SMSC; `listener` runs once it is connected. */
    function connect(options: { readonly host: string; readonly port: number }, listener?: () => void): Session
    /** A TCP server handing each accepted connection to `listener` as a session. */
    function createServer(options: Record<string, never>, listener: (session: Session) => void): Server

    /** Every SMPP 3.4 command status by name (`ESME_RTHROTTLED: 0x58`, …). */
    const errors: Readonly<Record<string, number>>
  }

  export = smpp
}

/** The package's field codecs, of which the adapter replaces one (PduSocket.ts). */
declare module "smpp/lib/defs.js" {
  export const types: {
    readonly cstring: {
      read: (buffer: Buffer, offset: number) => string
    }
  }
}
