/**
 * A service process (`node src/main.ts`, ServiceProcess.ts) once it serves, and how to call it
 * over real HTTP as an integrator (`call`) or the operator (`admin`, `newOrg`). Every process
 * started here is kept in `processes`, so that `killAll` ends whatever a test left running.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { root, servingLine, type Started, startService } from "./ServiceProcess.ts"
import { adminToken, organisationFactory, remoteCaller } from "./TestApp.ts"

const processes: Array<Started> = []

/** Starts a process with `env` (operator token, warn logs unless given) and waits until it serves. */
export const serve = async (env: Record<string, string>) => {
  const started = await startService({ SMS_ADMIN_TOKEN: adminToken, LOG_LEVEL: "warn", ...env })
  processes.push(started)
  await started.waitFor(servingLine)
  const base = `http://127.0.0.1:${started.port}`
  const call = remoteCaller(base)
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { token: adminToken, ...(body === undefined ? {} : { body }) })
  return { started, base, call, admin, newOrg: organisationFactory(admin) }
}
export type Served = Awaited<ReturnType<typeof serve>>

/** True while the process runs. */
export const isRunning = (p: Started): boolean => p.child.exitCode === null && p.child.signalCode === null

/** SIGKILLs every process `serve` started that still runs, and waits for them to end. */
export const killAll = async (): Promise<void> => {
  for (const p of processes) if (isRunning(p)) p.child.kill("SIGKILL")
  await Promise.all(processes.map((p) => p.exited))
}

/** Writes the output of every process `serve` started to test-output/<name>-<n>.log, to diagnose a failed run. */
export const saveOutputs = (name: string): void => {
  const dir = join(root, "test-output")
  mkdirSync(dir, { recursive: true })
  processes.forEach((p, i) => {
    const { stdout, stderr } = p.output()
    writeFileSync(join(dir, `${name}-${i}.log`), `${stdout}\n--- stderr\n${stderr}`)
  })
}
