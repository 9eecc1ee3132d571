/**
 * A simulator as an operator runs it: `node simulator/<kind>/main.ts` (the project's Node,
 * directly, so that a kill -9 reaches it) in a child process on a port and a data directory, its
 * output kept. SmscProcess.ts and OneApiProcess.ts read what each took from its journal.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { eventually } from "./Eventually.ts"
import { listens, node, root } from "./ServiceProcess.ts"

export interface SimulatorProcess {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves once the process has ended. */
  readonly exited: Promise<void>
}

const kinds = {
  smsc: { variables: "SMS_SMSC", name: "SMSC simulator" },
  oneapi: { variables: "SMS_ONEAPI", name: "OneAPI simulator" }
} as const

/** Starts the simulator `kind` on `port` with `dataDir` (and `env`), once it listens; fails with its output if it exits first. */
export const startSimulatorProcess = async (
  kind: keyof typeof kinds,
  port: number,
  dataDir: string,
  env: Record<string, string> = {}
): Promise<SimulatorProcess> => {
  const { variables, name } = kinds[kind]
  const child = spawn(node, [`simulator/${kind}/main.ts`], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      [`${variables}_PORT`]: String(port),
      [`${variables}_DATA_DIR`]: dataDir,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await eventually(
    async () => output,
    (o) => o.includes(`${name} listening`) || child.exitCode !== null,
    { timeoutMs: 30_000, what: `the ${name} listening` }
  )
  if (child.exitCode !== null) throw new Error(`the ${name} exited: ${output}`)
  return { child, output: () => output, exited }
}

/** `kill -9` of the simulator; resolves once it is gone. */
export const kill9 = async (simulator: SimulatorProcess): Promise<void> => {
  if (simulator.child.exitCode === null && simulator.child.signalCode === null) simulator.child.kill("SIGKILL")
  await simulator.exited
}

/**
 * `npm run <kind>` on `port` with `env`, killed with -9 once the simulator listens: resolves once
 * the simulator it started has stopped listening too (it notices that npm is gone), fails if it
 * never listens or is still there 10 s after. npm runs in a process group of its own, so that
 * whatever it leaves behind is ended after.
 */
export const awaitGoneWithNpm = async (kind: keyof typeof kinds, port: number, env: Record<string, string>) => {
  const npm = spawn("npm", ["run", kind], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: "ignore",
    detached: true
  })
  try {
    await eventually(
      () => listens(port),
      (up) => up,
      { timeoutMs: 30_000, what: `npm run ${kind} listening` }
    )
    npm.kill("SIGKILL")
    await eventually(
      () => listens(port),
      (up) => !up,
      { timeoutMs: 10_000, what: "the simulator gone with npm" }
    )
  } finally {
    try {
      process.kill(-npm.pid!, "SIGKILL")
    } catch {
      // nothing left
    }
  }
}
