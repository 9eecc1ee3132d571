/**
 * A simulator's memory on disk (the SMSC simulator's and the OneAPI simulator's,
 * docs/operators.md#the-smsc-simulator): an append-only journal of JSON lines, of entries of the
 * simulator's own type `E`, in its data directory. Each entry is
 * written with one synchronous `write` before the simulator acts on it, so a kill -9 of the
 * process loses nothing it had been given (no fsync: it guards against a process kill, not a power
 * cut). It is read back at start and rewritten with only what is still known (`rewrite`). A `pid`
 * file keeps a second process off the same directory.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"

const journalFile = "journal.jsonl"
const pidFile = "pid"

const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The entries of a journal's text; a line cut short (the last one, by a crash) is skipped. */
const parse = <E>(text: string): Array<E> => {
  const entries: Array<E> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    try {
      entries.push(JSON.parse(line) as E)
    } catch {
      // a torn line: what it held was never acted on
    }
  }
  return entries
}

const line = (entry: unknown): string => `${JSON.stringify(entry)}\n`

export class Journal<E> {
  private readonly dir: string
  /** Undefined once closed: a disposed simulator writes nothing (its descriptor may be another file's by then). */
  private fd: number | undefined
  /** Entries appended since the last rewrite. */
  appended = 0

  private constructor(dir: string, fd: number) {
    this.dir = dir
    this.fd = fd
  }

  /** Opens the journal in `dir` (created if missing) and returns what it holds; throws if another live process holds `dir`. */
  static open<E>(dir: string): { readonly journal: Journal<E>; readonly entries: ReadonlyArray<E> } {
    mkdirSync(dir, { recursive: true })
    const holder = Journal.holder(dir)
    if (holder !== undefined && holder !== process.pid && running(holder)) {
      throw new Error(`the data directory ${dir} is in use by process ${holder}`)
    }
    writeFileSync(join(dir, pidFile), `${process.pid}\n`)
    let text = ""
    try {
      text = readFileSync(join(dir, journalFile), "utf8")
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e
    }
    return { journal: new Journal<E>(dir, openSync(join(dir, journalFile), "a")), entries: parse<E>(text) }
  }

  private static holder(dir: string): number | undefined {
    try {
      const pid = Number.parseInt(readFileSync(join(dir, pidFile), "utf8"), 10)
      return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
    } catch {
      return undefined
    }
  }

  /** Writes one entry through to the system before returning. */
  append(entry: E): void {
    if (this.fd === undefined) return
    writeSync(this.fd, line(entry))
    this.appended++
  }

  /** Replaces the journal with `entries` (written aside, then renamed over it). */
  rewrite(entries: Iterable<E>): void {
    if (this.fd === undefined) return
    const aside = join(this.dir, `${journalFile}.new`)
    const fd = openSync(aside, "w")
    let chunk = ""
    for (const entry of entries) {
      chunk += line(entry)
      if (chunk.length > 1 << 20) {
        writeSync(fd, chunk)
        chunk = ""
      }
    }
    writeSync(fd, chunk)
    closeSync(fd)
    renameSync(aside, join(this.dir, journalFile))
    closeSync(this.fd)
    this.fd = openSync(join(this.dir, journalFile), "a")
    this.appended = 0
  }

  /** Closes the journal and frees the directory. */
  close(): void {
    if (this.fd === undefined) return
    closeSync(this.fd)
    this.fd = undefined
    rmSync(join(this.dir, pidFile), { force: true })
  }
}
