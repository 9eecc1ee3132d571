/**
 * Ending with the npm that started it. `npm start` and `npm run smsc` run their program under a
 * shell (npm, then `sh -c`, then node), and neither a kill -9 nor a SIGTERM of npm reaches it:
 * npm passes a SIGTERM to its shell, which dies without passing it on, and node lives on,
 * re-parented, still listening and holding its data directory. So, under npm, the program
 * watches its parent and, when that parent is npm's shell, the shell's parent too: a process
 * whose parent dies is given another one, which is what is polled for (a dead npm nobody has
 * reaped still answers `kill -0`). The service (src/main.ts) and the SMSC simulator
 * (simulator/smsc/main.ts) both stop as on their own SIGTERM then.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

interface ProcessInfo {
  readonly ppid: number
  readonly name: string
}

/** The parent and command name of a process, undefined once it is gone (`/proc` on Linux, `ps` elsewhere). */
const processInfo = (pid: number): ProcessInfo | undefined => {
  try {
    // "<pid> (<name>) <state> <ppid> …"; the name may hold spaces and parentheses
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const close = stat.lastIndexOf(")")
    return { name: stat.slice(stat.indexOf("(") + 1, close), ppid: Number(stat.slice(close + 2).split(" ")[1]) }
  } catch {
    try {
      const [ppid, name] = execFileSync("ps", ["-o", "ppid=,comm=", "-p", String(pid)], { encoding: "utf8" })
        .trim()
        .split(/\s+/)
      return { ppid: Number(ppid), name: (name ?? "").replace(/^.*\//, "") }
    } catch {
      return undefined
    }
  }
}

const shells = /^-?(sh|bash|dash|ash|zsh|ksh)$/

/** Calls `onGone` once the process that started this one (npm, past the shell it runs scripts in) is gone. */
export const whenParentGone = (onGone: () => void, intervalMs = 250): void => {
  const parent = process.ppid
  const info = processInfo(parent)
  const grandparent = info !== undefined && shells.test(info.name) ? info.ppid : undefined
  const timer = setInterval(() => {
    const gone = process.ppid !== parent || (grandparent !== undefined && processInfo(parent)?.ppid !== grandparent)
    if (!gone) return
    clearInterval(timer)
    onGone()
  }, intervalMs)
  timer.unref()
}
