/**
 * Writing PDUs in batches: the PDUs written in one turn of the event loop leave in one system
 * call (the socket is corked until the next tick) rather than one call each, which under load
 * is most of the cost of a small PDU.
 */
import type { Socket } from "node:net"
import type smpp from "smpp"

const corked = new WeakSet<Socket>()

/** Writes a PDU on a session (numbering a request); false when the socket is no longer writable. */
export const sendPdu = (session: smpp.Session, pdu: smpp.PDU): boolean => {
  const socket = session.socket
  if (!corked.has(socket)) {
    corked.add(socket)
    socket.cork()
    process.nextTick(() => {
      corked.delete(socket)
      socket.uncork()
    })
  }
  return session.send(pdu)
}
