/**
 * SMPP 3.4 framing over one TCP connection to an SMSC, made safe against whatever the peer
 * sends. A PDU is cut from the stream by its `command_length`: one under 16 octets (the header)
 * or over `pduOctetsMax` cannot be framed, so it closes the connection at once (a 4-octet PDU
 * used to wedge it until the keep-alive gave up). A frame's body is decoded by the `smpp`
 * package inside a guard: a body it cannot decode becomes a `Malformed` frame that still carries
 * its header, and the connection goes on, since the next frame starts where `command_length`
 * says. Requests are numbered here; writes made in one turn of the event loop leave together.
 */
import { connect, type Socket } from "node:net"
import smpp from "smpp"
import { types } from "smpp/lib/defs.js"
import { framesOfPdus } from "./MoUserData.ts"
import { corkedWrite } from "./SendPdu.ts"

/** The four fields every PDU starts with. */
export interface PduHeader {
  readonly commandLength: number
  readonly commandId: number
  readonly commandStatus: number
  readonly sequenceNumber: number
}

/** What one frame of the stream held. */
export type Frame =
  | { readonly _tag: "Pdu"; readonly header: PduHeader; readonly pdu: smpp.PDU }
  /** A frame whose body could not be decoded: only its header is known. */
  | { readonly _tag: "Malformed"; readonly header: PduHeader; readonly why: string }

export interface PduSocketHandlers {
  readonly onConnect: () => void
  readonly onFrame: (frame: Frame) => void
  /** Called once, when the connection is closed for whatever reason. */
  readonly onClose: (reason: string) => void
}

const headerOctets = 16
const DELIVER_SM = 0x00000005
const DATA_SM = 0x00000103
/** Longest PDU accepted (what the `smpp` package decodes); a longer one closes the connection. */
export const pduOctetsMax = 16_384
const sequenceMax = 0x7fff_ffff

const headerOf = (frame: Buffer): PduHeader => ({
  commandLength: frame.readUInt32BE(0),
  commandId: frame.readUInt32BE(4),
  commandStatus: frame.readUInt32BE(8),
  sequenceNumber: frame.readUInt32BE(12)
})

const firstLine = (error: unknown): string => String(error instanceof Error ? error.message : error).split("\n")[0]!

/**
 * The package reads a C-octet string (message_id, receipted_message_id, addresses) as 7-bit
 * ASCII, clearing each octet's top bit: an id of "é340" (0xE9) would arrive as "i340", an id the
 * SMSC never gave, and pass the id check. Read as latin1, every octet stays what it was (one
 * character each, so the package's length arithmetic is unchanged) and the check refuses it.
 */
types.cstring.read = (buffer, offset) => {
  const end = buffer.indexOf(0, offset)
  return buffer.toString("latin1", offset, end === -1 ? buffer.length : end)
}

/** Decodes one whole frame; never throws. */
export const decodeFrame = (frame: Buffer): Frame => {
  const header = headerOf(frame)
  try {
    const pdu = new smpp.PDU(frame)
    // a mobile-originated message is read from its octets, not as the package decoded them (MoUserData.ts)
    if (header.commandId === DELIVER_SM || header.commandId === DATA_SM) framesOfPdus.set(pdu, Buffer.from(frame))
    return { _tag: "Pdu", header, pdu }
  } catch (error) {
    return { _tag: "Malformed", header, why: firstLine(error) }
  }
}

export class PduSocket {
  private readonly socket: Socket
  private readonly handlers: PduSocketHandlers
  private buffered: Buffer = Buffer.alloc(0)
  private sequence = 0
  private closedReason: string | undefined

  constructor(host: string, port: number, handlers: PduSocketHandlers) {
    this.handlers = handlers
    this.socket = connect({ host, port })
    // PDUs are small and answered one by one: Nagle's algorithm would hold each for an ACK
    this.socket.setNoDelay(true)
    this.socket.on("connect", () => this.guard(() => handlers.onConnect()))
    this.socket.on("data", (chunk) => this.guard(() => this.receive(chunk)))
    this.socket.on("error", (error: Error & { readonly code?: string }) =>
      this.markClosed(error.code ?? firstLine(error))
    )
    this.socket.on("close", () => this.markClosed("closed by the SMSC"))
  }

  /** Why the connection is closed, or undefined while it is open. */
  get closed(): string | undefined {
    return this.closedReason
  }

  /** Writes a request with the next sequence number (returned), or undefined when nothing could be written. */
  request(pdu: smpp.PDU): number | undefined {
    this.sequence = this.sequence === sequenceMax ? 1 : this.sequence + 1
    pdu.sequence_number = this.sequence
    return this.write(pdu) ? this.sequence : undefined
  }

  /** Writes a PDU as it is (a response carries its request's sequence number); false when nothing was written. */
  write(pdu: smpp.PDU): boolean {
    if (this.closedReason !== undefined || !this.socket.writable) return false
    let octets: Buffer
    try {
      octets = pdu.toBuffer()
    } catch (error) {
      this.destroy(`cannot encode ${pdu.command}: ${firstLine(error)}`)
      return false
    }
    corkedWrite(this.socket, octets)
    return true
  }

  /** Ends the connection after what was written. */
  end(): void {
    this.socket.end()
  }

  /** Closes the connection at once with `reason`. */
  destroy(reason: string): void {
    this.markClosed(reason)
    this.socket.destroy()
  }

  /** Anything a handler (or the package) throws closes this connection only, never the process. */
  private guard(run: () => void): void {
    try {
      run()
    } catch (error) {
      this.destroy(`failure on the connection: ${firstLine(error)}`)
    }
  }

  private receive(chunk: Buffer): void {
    let data = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    while (data.length >= 4 && this.closedReason === undefined) {
      const length = data.readUInt32BE(0)
      if (length < headerOctets || length > pduOctetsMax) {
        return this.destroy(`a PDU of ${length} octets cannot be read (from ${headerOctets} to ${pduOctetsMax})`)
      }
      if (data.length < length) break
      const frame = decodeFrame(data.subarray(0, length))
      data = data.subarray(length)
      this.handlers.onFrame(frame)
    }
    this.buffered = data.length === 0 ? Buffer.alloc(0) : Buffer.from(data)
  }

  private markClosed(reason: string): void {
    if (this.closedReason !== undefined) return
    this.closedReason = reason
    this.buffered = Buffer.alloc(0)
    this.guard(() => this.handlers.onClose(reason))
  }
}
