/**
 * The embedded database's directory, made usable before PGlite touches it: created if missing,
 * proved writable, and locked for this process. Two processes on one directory would corrupt
 * it, so the lock file holds the owner's pid; a lock whose pid is gone (a crash, `kill -9`) is
 * taken over. Every refusal is one line naming SMS_DATA_DIR.
 */
import { Data } from "effect"
import { linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"

/** A start-up refusal, with the one line that explains it. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly line: string }> {}

/** The lock file's name inside the data directory. */
export const lockFileName = "sms-service.lock"

const codeOf = (error: unknown): string =>
  typeof error === "object" && error !== null && typeof (error as { code?: unknown }).code === "string"
    ? (error as { code: string }).code
    : String(error)

const refuse = (dataDir: string, why: string) =>
  new StartupError({ line: `SMS_DATA_DIR ${dataDir} cannot be used: ${why}` })

/**
 * Creates `dir` and its missing parents one level at a time. Not `mkdirSync(..., { recursive: true })`:
 * under a directory that refuses creation without being a real one (`/proc`), Node's recursive
 * mkdir loops forever, at full CPU, deaf to SIGTERM.
 */
const ensureDirectory = (dir: string): void => {
  try {
    if (statSync(dir).isDirectory()) return
    throw Object.assign(new Error(`${dir} is not a directory`), { code: "ENOTDIR" })
  } catch (error) {
    if (codeOf(error) !== "ENOENT") throw error
  }
  const parent = dirname(dir)
  if (parent !== dir) ensureDirectory(parent)
  mkdirSync(dir)
}

/** True when a process with this pid exists (EPERM: it exists, under another user). */
const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return codeOf(error) === "EPERM"
  }
}

/** The pid a lock file holds; undefined when it is gone or holds no pid. */
const readPid = (path: string): number | undefined => {
  try {
    const text = readFileSync(path, "utf8").trim()
    return /^\d+$/.test(text) ? Number(text) : undefined
  } catch (error) {
    if (codeOf(error) === "ENOENT") return undefined
    throw error
  }
}

/** Removes the lock file if it is still ours. */
const release = (lock: string): void => {
  try {
    if (readPid(lock) === process.pid) unlinkSync(lock)
  } catch {
    // already gone: nothing to release
  }
}

/**
 * Creates the lock file holding our pid; false when it already exists. Written aside, then
 * linked into place: the lock never exists without its pid, so no rival reads it empty.
 */
const tryCreate = (lock: string): boolean => {
  const mine = `${lock}.${process.pid}`
  writeFileSync(mine, `${process.pid}\n`, { mode: 0o644 })
  try {
    linkSync(mine, lock)
    return true
  } catch (error) {
    if (codeOf(error) === "EEXIST") return false
    throw error
  } finally {
    unlinkSync(mine)
  }
}

/**
 * Prepares `dataDir` and locks it for this process; returns the release. Throws StartupError
 * when the directory cannot be created or written, or another live process holds it.
 */
export const lockDataDir = (dataDir: string): (() => void) => {
  const dir = resolve(dataDir)
  const lock = join(dir, lockFileName)
  try {
    ensureDirectory(dir)
    // a few rounds: a stale lock removed by a rival between our reads is simply looked at again
    for (let round = 0; round < 5; round++) {
      if (tryCreate(lock)) return () => release(lock)
      const owner = readPid(lock)
      if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
        throw new StartupError({
          line: `SMS_DATA_DIR ${dataDir} is in use by another process (pid ${owner}); stop it or choose another directory`
        })
      }
      // stale: moved aside under a name of our own, so that two processes never both remove one lock
      const aside = `${lock}.stale-${process.pid}`
      try {
        renameSync(lock, aside)
      } catch (error) {
        if (codeOf(error) !== "ENOENT") throw error
        continue
      }
      if (readPid(aside) !== owner) {
        // a rival replaced the stale lock between our read and the move: give its lock back
        try {
          linkSync(aside, lock)
        } catch (error) {
          if (codeOf(error) !== "EEXIST") throw error
        }
      }
      unlinkSync(aside)
    }
    throw refuse(dataDir, "its lock file keeps changing; is another process starting on it?")
  } catch (error) {
    if (error instanceof StartupError) throw error
    throw refuse(dataDir, error instanceof Error ? error.message : String(error))
  }
}
