/**
 * What the SMSC simulator counted, for a test in another process to read: `stats.json` in its
 * data directory, rewritten (aside, then renamed over it) when a bind starts or ends at once and
 * otherwise at most every `flushMs` while counts change. The counts are those an operator's SMSC
 * enforces on an account: how many binds it holds at once (the most ever), and how many
 * `submit_sm` arrive in any 1 s window (the most ever).
 */
import { renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface SmscCounts {
  /** Per account (system_id): binds now, and the most ever bound at once. */
  readonly binds: Readonly<Record<string, { readonly now: number; readonly max: number }>>
  /** The most `submit_sm` received in any 1 s window, over all connections. */
  readonly maxSubmitsPerSecond: number
  /** Every `submit_sm` received. */
  readonly submits: number
}

export const statsFile = "stats.json"
const flushMs = 100

export class StatsFile {
  private readonly path: string | undefined
  private readonly read: () => SmscCounts
  private timer: NodeJS.Timeout | undefined
  private closed = false

  /** Writes the counts `read` gives to `dataDir`/stats.json (nothing without a data directory). */
  constructor(dataDir: string | undefined, read: () => SmscCounts) {
    this.path = dataDir === undefined ? undefined : join(dataDir, statsFile)
    this.read = read
    this.write()
  }

  /** The counts changed: written now when `now`, else within `flushMs`. */
  changed(now: boolean): void {
    if (this.path === undefined || this.closed) return
    if (now) return this.write()
    if (this.timer !== undefined) return
    this.timer = setTimeout(() => this.write(), flushMs)
    this.timer.unref()
  }

  /** Writes what is pending; nothing is written after. */
  close(): void {
    if (this.timer !== undefined) this.write()
    this.closed = true
  }

  private write(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    if (this.path === undefined) return
    writeFileSync(`${this.path}.new`, `${JSON.stringify(this.read())}\n`)
    renameSync(`${this.path}.new`, this.path)
  }
}
