/**
 * Writing PDUs in batches: the octets written in one turn of the event loop leave in one system
 * call (the socket is corked until the next tick) rather than one call each, which under load
 * is most of the cost of a small PDU.
 */
import type { Socket } from "node:net"
import type smpp from "smpp"

const corked = new WeakSet<Socket>()

/** Corks the socket until the next tick, if it is not already. */
const corkForThisTurn = (socket: Socket): void => {
  if (corked.has(socket)) return
  corked.add(socket)
  socket.cork()
  process.nextTick(() => {
    corked.delete(socket)
    socket.uncork()
  })
}

/** Writes octets on a socket, leaving with whatever else is written in this turn. */
export const corkedWrite = (socket: Socket, octets: Uint8Array): void => {
  corkForThisTurn(socket)
  socket.write(octets)
}

/** Writes a PDU on a session of the `smpp` package (numbering a request); false when the socket is no longer writable. */
export const sendPdu = (session: smpp.Session, pdu: smpp.PDU): boolean => {
  corkForThisTurn(session.socket)
  return session.send(pdu)
}
