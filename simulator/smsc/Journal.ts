/**
 * The SMSC simulator's memory on disk: an append-only journal of JSON lines in its data
 * directory. Each entry is written with one synchronous `write` before the simulator acts on it,
 * so a kill -9 of the process loses nothing the system had been given (no fsync: it guards
 * against a process kill, not a power cut). It is read back at start and rewritten with only
 * what is still known (`rewrite`). A `pid` file keeps a second process off the same directory.
 */
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"

/** A message the simulator took, as kept: what `query_sm` and its receipt need. */
export interface KnownMessage {
  /** The ids given to its parts, in order; the first is the message's id. */
  readonly ids: ReadonlyArray<number>
  readonly from: string
  /** E.164, with `+`. */
  readonly to: string
  readonly sourceTon: number
  readonly sourceNpi: number
  readonly destTon: number
  readonly destNpi: number
  /** SMPP message_state. */
  state: number
}

/** A receipt owed for a message: its final `stat:` and when it is due (epoch ms, so that it means the same to the next process). */
export interface Owed {
  readonly word: "DELIVRD" | "UNDELIV"
  readonly dueAt: number
}

export type Entry =
  /** Every id below `below` may have been given. */
  | { readonly kind: "ids"; readonly below: number }
  | { readonly kind: "taken"; readonly message: KnownMessage; readonly owed?: Owed }
  | { readonly kind: "state"; readonly id: number; readonly state: number }
  /** The receipt of the message with this (first) id was answered with status 0. */
  | { readonly kind: "acknowledged"; readonly id: number }

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
const parse = (text: string): Array<Entry> => {
  const entries: Array<Entry> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    try {
      entries.push(JSON.parse(line) as Entry)
    } catch {
      // a torn line: what it held was never acted on
    }
  }
  return entries
}

const line = (entry: Entry): string => `${JSON.stringify(entry)}\n`

export class Journal {
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
  static open(dir: string): { readonly journal: Journal; readonly entries: ReadonlyArray<Entry> } {
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
    return { journal: new Journal(dir, openSync(join(dir, journalFile), "a")), entries: parse(text) }
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
  append(entry: Entry): void {
    if (this.fd === undefined) return
    writeSync(this.fd, line(entry))
    this.appended++
  }

  /** Replaces the journal with `entries` (written aside, then renamed over it). */
  rewrite(entries: Iterable<Entry>): void {
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
