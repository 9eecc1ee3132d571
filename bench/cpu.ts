/**
 * CPU seconds spent by a phase, read from /proc: the service's Node process and the PostgreSQL
 * backends serving the bench's database. Unlike throughput, CPU time per message hardly moves
 * with the machine's other load, so it shows where a drain's cost goes even on a busy machine.
 * Backends are sampled every 100 ms: one that ends between two samples loses its last 100 ms.
 */
import { readdirSync, readFileSync } from "node:fs"

const ticksPerSecond = 100

/** utime + stime of a process, in clock ticks (undefined once it is gone). */
const cpuTicks = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

/** Pids of the PostgreSQL backends connected to `database` (their process title names it). */
const backendsOf = (database: string): Array<number> =>
  readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const title = readFileSync(`/proc/${d}/cmdline`, "utf8")
        return title.startsWith("postgres: ") && title.includes(` ${database} `) ? [Number(d)] : []
      } catch {
        return []
      }
    })

/** CPU seconds (user + system) a process has used so far (undefined once it is gone): a simulator's. */
export const processSeconds = (pid: number): number | undefined => {
  const ticks = cpuTicks(pid)
  return ticks === undefined ? undefined : ticks / ticksPerSecond
}

export interface CpuSeconds {
  readonly postgresS: number
  readonly serviceS: number
}

/** Starts sampling; `stop` returns the CPU seconds used since the start. */
export const cpuSampler = (database: string, servicePid?: number) => {
  // backends there at the start count from their ticks then; later ones from their birth
  const first = new Map<number, number>()
  const last = new Map<number, number>()
  const sample = () => {
    for (const pid of backendsOf(database)) {
      const ticks = cpuTicks(pid)
      if (ticks !== undefined) last.set(pid, ticks)
    }
  }
  sample()
  for (const [pid, ticks] of last) first.set(pid, ticks)
  const serviceStart = servicePid === undefined ? undefined : cpuTicks(servicePid)
  const timer = setInterval(sample, 100)
  return {
    stop: (): CpuSeconds => {
      clearInterval(timer)
      sample()
      let postgres = 0
      for (const [pid, ticks] of last) postgres += ticks - (first.get(pid) ?? 0)
      const serviceEnd = servicePid === undefined ? undefined : cpuTicks(servicePid)
      const service = serviceStart === undefined || serviceEnd === undefined ? 0 : serviceEnd - serviceStart
      return { postgresS: postgres / ticksPerSecond, serviceS: service / ticksPerSecond }
    }
  }
}
