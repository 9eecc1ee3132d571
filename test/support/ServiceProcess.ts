/**
 * The service as an operator runs it: `node src/main.ts` in a child process on a free port, its
 * output kept, with a bounded wait for a line of it. For tests of start-up, restarts, `kill -9`
 * and several processes on one database.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { connect, createServer } from "node:net"
import { join, resolve } from "node:path"

export const root = resolve(import.meta.dirname, "../..")
/** Node 22 from the devDependency (the machine's own may be older). */
export const node = join(root, "node_modules/.bin/node")

/** A port nobody listens on right now. */
export const freePort = () =>
  new Promise<number>((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => done(port))
    })
  })

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export const listens = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

export interface Started {
  readonly child: ChildProcess
  readonly port: number
  readonly output: () => { stdout: string; stderr: string }
  /** Resolves with the exit code once the process ends (null if killed by a signal). */
  readonly exited: Promise<number | null>
  /** Resolves once stdout contains `text`; rejects if the process ends first or after 60 s. */
  readonly waitFor: (text: string) => Promise<void>
}

/** The line the service prints once it serves. */
export const servingLine = "API docs"

/** Starts the service with `env` on top of a clean environment (only PATH; no DATABASE_URL unless given) on PORT or a free port. */
export const startService = async (env: Record<string, string>): Promise<Started> => {
  const port = Number(env.PORT ?? (await freePort()))
  const child = spawn(node, ["src/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)))
  const waitFor = (text: string) =>
    new Promise<void>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no "${text}" within 60 s: ${stdout} ${stderr}`)), 60_000)
      const check = () => {
        if (stdout.includes(text)) {
          clearTimeout(timer)
          done()
        }
      }
      child.stdout!.on("data", check)
      check()
      void exited.then(() => {
        clearTimeout(timer)
        if (!stdout.includes(text)) fail(new Error(`exited before "${text}": ${stdout} ${stderr}`))
      })
    })
  return { child, port, output: () => ({ stdout, stderr }), exited, waitFor }
}
