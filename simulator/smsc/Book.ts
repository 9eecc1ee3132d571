/**
 * What the SMSC simulator keeps of the messages it took: the ids it gave (never one twice), the
 * messages `query_sm` knows (the newest `keptMax` ids; older ones are forgotten) and the receipts
 * it owes until one is answered with status 0. With a data directory every change goes through
 * a Journal first, so that a new process on the same directory carries on where a killed one
 * stopped; without one it lives in memory only.
 */
import { Journal } from "../Journal.ts"
import type { Entry, KnownMessage, Owed } from "./Entries.ts"

export interface OwedReceipt extends Owed {
  readonly message: KnownMessage
}

const firstMessageId = 1_000_000_000
/** Ids reserved in the journal at a time: one entry per this many ids; a restart skips what is left of the block. */
const idBlock = 1000

/** Only what a message's receipt and `query_sm` need (the in-memory message holds more). */
const kept = (m: KnownMessage): KnownMessage => ({
  ids: m.ids,
  from: m.from,
  to: m.to,
  sourceTon: m.sourceTon,
  sourceNpi: m.sourceNpi,
  destTon: m.destTon,
  destNpi: m.destNpi,
  state: m.state
})

export class Book {
  private readonly journal: Journal<Entry> | undefined
  private readonly keptMax: number
  private readonly byId = new Map<number, KnownMessage>()
  /** By the message's first id. */
  private readonly owed = new Map<number, OwedReceipt>()
  private nextId = firstMessageId
  /** Ids from here on are not reserved in the journal yet. */
  private reservedBelow = firstMessageId

  private constructor(journal: Journal<Entry> | undefined, keptMax: number) {
    this.journal = journal
    this.keptMax = keptMax
  }

  /** A book in memory, or read back from `dataDir` (and compacted there). */
  static open(dataDir: string | undefined, keptMax: number): Book {
    if (dataDir === undefined) return new Book(undefined, keptMax)
    const { entries, journal } = Journal.open<Entry>(dataDir)
    const book = new Book(journal, keptMax)
    for (const entry of entries) book.replay(entry)
    book.nextId = book.reservedBelow
    journal.rewrite(book.snapshot())
    return book
  }

  /** The receipts owed, oldest first. */
  get receiptsOwed(): ReadonlyArray<OwedReceipt> {
    return [...this.owed.values()]
  }

  /** An id never given before, reserved in the journal before it is returned. */
  newId(): number {
    if (this.nextId >= this.reservedBelow) {
      this.reservedBelow = this.nextId + idBlock
      this.journal?.append({ kind: "ids", below: this.reservedBelow })
    }
    return this.nextId++
  }

  /** A message taken (every part), and the receipt it owes if any. */
  taken(message: KnownMessage, owed: Owed | undefined): void {
    this.journal?.append(
      owed === undefined ? { kind: "taken", message: kept(message) } : { kind: "taken", message: kept(message), owed }
    )
    this.remember(message)
    if (owed !== undefined) this.owed.set(message.ids[0]!, { message, ...owed })
    this.compactIfLong()
  }

  /** The message's state changed (its receipt went out). */
  stateChanged(message: KnownMessage): void {
    this.journal?.append({ kind: "state", id: message.ids[0]!, state: message.state })
  }

  /** Its receipt was answered with status 0: it is owed no more. */
  acknowledged(message: KnownMessage): void {
    if (!this.owed.delete(message.ids[0]!)) return
    this.journal?.append({ kind: "acknowledged", id: message.ids[0]! })
  }

  /** The message that was given this id (any of its parts'), if still known. */
  find(id: number): KnownMessage | undefined {
    return this.byId.get(id)
  }

  /** Closes the journal; the book is no longer written. */
  close(): void {
    this.journal?.close()
  }

  private remember(message: KnownMessage): void {
    for (const id of message.ids) this.byId.set(id, message)
    while (this.byId.size > this.keptMax) this.byId.delete(this.byId.keys().next().value!)
  }

  private replay(entry: Entry): void {
    switch (entry.kind) {
      case "ids":
        this.reservedBelow = Math.max(this.reservedBelow, entry.below)
        return
      case "taken":
        this.remember(entry.message)
        if (entry.owed !== undefined) this.owed.set(entry.message.ids[0]!, { message: entry.message, ...entry.owed })
        return
      case "state": {
        const message = this.byId.get(entry.id) ?? this.owed.get(entry.id)?.message
        if (message !== undefined) message.state = entry.state
        return
      }
      case "acknowledged":
        this.owed.delete(entry.id)
    }
  }

  /** What the journal must hold to give back this book: the reserved ids, then every message known or owed, oldest first. */
  private *snapshot(): Iterable<Entry> {
    yield { kind: "ids", below: this.reservedBelow }
    for (const { message, word, dueAt } of this.owed.values()) {
      // its ids are forgotten oldest first: while its last one is known, the loop below writes it
      if (!this.byId.has(message.ids.at(-1)!)) yield { kind: "taken", message: kept(message), owed: { word, dueAt } }
    }
    let last: KnownMessage | undefined
    for (const message of this.byId.values()) {
      if (message === last) continue
      last = message
      const owed = this.owed.get(message.ids[0]!)
      yield owed === undefined
        ? { kind: "taken", message: kept(message) }
        : { kind: "taken", message: kept(message), owed: { word: owed.word, dueAt: owed.dueAt } }
    }
  }

  /** Rewrites the journal once it holds far more entries than what is still known. */
  private compactIfLong(): void {
    if (this.journal !== undefined && this.journal.appended > 2 * (this.byId.size + this.owed.size) + 10_000) {
      this.journal.rewrite(this.snapshot())
    }
  }
}
