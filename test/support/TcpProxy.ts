/**
 * A TCP proxy on a free loopback port, for tests that make a server unreachable without touching
 * it (the shared PostgreSQL must never be stopped): `cut` drops every connection through it and
 * refuses new ones until `restore`. `moveTo` points it at another server, as a failover's proxy
 * follows the new primary (HAProxy's `on-marked-down shutdown-sessions`: the old sessions end).
 */
import { connect, createServer, type Server, type Socket } from "node:net"

export class TcpProxy {
  private readonly server: Server
  private readonly sockets = new Set<Socket>()
  private down = false
  private target: { readonly host: string; readonly port: number }

  private constructor(target: { readonly host: string; readonly port: number }) {
    this.target = target
    this.server = createServer((client) => {
      if (this.down) return void client.destroy()
      const upstream = connect(this.target.port, this.target.host)
      for (const [a, b] of [
        [client, upstream],
        [upstream, client]
      ] as const) {
        this.sockets.add(a)
        a.pipe(b)
        a.on("error", () => b.destroy())
        a.on("close", () => {
          this.sockets.delete(a)
          b.destroy()
        })
      }
    })
  }

  /** Starts forwarding 127.0.0.1:<free port> to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target)
    await new Promise<void>((resolve) => proxy.server.listen(0, "127.0.0.1", resolve))
    return proxy
  }

  /** The port it listens on. */
  get port(): number {
    return (this.server.address() as { port: number }).port
  }

  /** Drops every connection and refuses new ones (accepted, then closed at once) until `restore`. */
  cut(): void {
    this.down = true
    for (const socket of this.sockets) socket.destroy()
  }

  /** Forwards new connections to `target` from now on; the connections to the old one are dropped. */
  moveTo(target: { readonly host: string; readonly port: number }): void {
    this.target = target
    for (const socket of this.sockets) socket.destroy()
  }

  /** Forwards new connections again. */
  restore(): void {
    this.down = false
  }

  /** Drops everything and stops listening. */
  close(): Promise<void> {
    this.cut()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}
