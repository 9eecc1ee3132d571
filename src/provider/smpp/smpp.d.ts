/**
 * Types of the `smpp` package (0.5.1, untyped JavaScript), limited to what this project uses:
 * the client session, the server, PDUs and the fields of the PDUs the adapter and the SMSC
 * simulator read or write.
 */
declare module "smpp" {
  import type { EventEmitter } from "node:events"
  import type { Server as NetServer, Socket } from "node:net"

  namespace smpp {
    /** A command this project sends or answers. */
    type CommandName =
      | "bind_transceiver"
      | "bind_transceiver_resp"
      | "submit_sm"
      | "submit_sm_resp"
      | "deliver_sm"
      | "deliver_sm_resp"
      | "query_sm"
      | "query_sm_resp"
      | "enquire_link"
      | "enquire_link_resp"
      | "unbind"
      | "unbind_resp"
      | "generic_nack"

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
      esm_class?: number
      registered_delivery?: number
      data_coding?: number
      /** Written as raw octets (a Buffer is sent as it is, UDH included); read as decoded. */
      short_message?: Buffer | DecodedShortMessage
      message_id?: string
      message_state?: number
      final_date?: string
      error_code?: number
      /** TLV 0x001E. */
      receipted_message_id?: string
    }

    interface PduOptions extends PduFields {
      command_status?: number
      sequence_number?: number
    }

    /** A PDU: its header, and the fields of its command (declared by merging with PduFields). */
    interface PDU extends PduFields {}
    class PDU {
      constructor(command: CommandName, options?: PduOptions)
      /** The command's name, `"unknown"` for an id the package does not know. */
      readonly command: string
      readonly command_id: number
      command_status: number
      /** Set by `Session.send` for a request that has none. */
      sequence_number: number
      isResponse(): boolean
      /** The response PDU to this request, with its sequence number. */
      response(options?: PduOptions): PDU
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
