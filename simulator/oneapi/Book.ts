/**
 * What the OneAPI simulator keeps (docs/operators.md#the-oneapi-simulator): the ids it gave (never
 * one twice), the client correlators it took (so that a request sent again, after a crash of
 * either side, is answered 409 and never makes a second SMS), the correlators of +261340000008 it
 * saw, the receipts it owes until one is answered 2xx, and the tokens it issued. With a data
 * directory every change goes through a Journal first, so that a new process on the directory
 * carries on where a killed one stopped; without one it lives in memory only.
 */
import { Journal } from "../Journal.ts"

/** The final statuses a receipt can carry. */
export type FinalStatus = "DeliveredToTerminal" | "DeliveryImpossible"

/** A delivery receipt owed: where it goes, what it says, and when it is due (epoch ms, the same to the next process). */
export interface Receipt {
  readonly notifyUrl: string
  /** The recipient as the request wrote it, `tel:+261…`. */
  readonly address: string
  readonly deliveryStatus: FinalStatus
  readonly callbackData?: string
  readonly dueAt: number
}

export type Entry =
  /** Every id below `below` may have been given. */
  | { readonly kind: "ids"; readonly below: number }
  | { readonly kind: "taken"; readonly correlator: string; readonly id: number; readonly owed?: Receipt }
  /** A request of +261340000008 under this correlator was seen (and never taken). */
  | { readonly kind: "unreachable"; readonly correlator: string }
  /** The receipt of the message with this id was answered 2xx. */
  | { readonly kind: "acknowledged"; readonly id: number }
  | { readonly kind: "token"; readonly token: string; readonly expiresAt: number }
  /** Every token issued before is expired. */
  | { readonly kind: "tokensExpired" }

const firstMessageId = 1_000_000_000
/** Ids reserved in the journal at a time: one entry per this many ids; a restart skips what is left of the block. */
const idBlock = 1000

export class Book {
  private readonly journal: Journal<Entry> | undefined
  private readonly keptMax: number
  /** The id each taken correlator was given, oldest first. */
  private readonly correlators = new Map<string, number>()
  private readonly unreachable = new Set<string>()
  /** By message id. */
  private readonly owed = new Map<number, Receipt>()
  /** Each token's expiry (epoch ms). */
  private readonly tokens = new Map<string, number>()
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

  /** The receipts owed, by message id, oldest first. */
  get receiptsOwed(): ReadonlyArray<readonly [number, Receipt]> {
    return [...this.owed.entries()]
  }

  /** How many correlators it remembers as taken. */
  get correlatorsKnown(): number {
    return this.correlators.size
  }

  /** An id never given before, reserved in the journal before it is returned. */
  newId(): number {
    if (this.nextId >= this.reservedBelow) {
      this.reservedBelow = this.nextId + idBlock
      this.journal?.append({ kind: "ids", below: this.reservedBelow })
    }
    return this.nextId++
  }

  /** The id of the message taken under this correlator, if any. */
  idOf(correlator: string): number | undefined {
    return this.correlators.get(correlator)
  }

  /** A message taken under `correlator` as `id`, and the receipt it owes if any. */
  taken(correlator: string, id: number, owed: Receipt | undefined): void {
    this.journal?.append(
      owed === undefined ? { kind: "taken", correlator, id } : { kind: "taken", correlator, id, owed }
    )
    this.remember(correlator, id)
    if (owed !== undefined) this.owed.set(id, owed)
    this.compactIfLong()
  }

  /** Whether a request of +261340000008 was seen under this correlator before; records it if not. */
  sawUnreachable(correlator: string): boolean {
    if (this.unreachable.has(correlator)) return true
    this.journal?.append({ kind: "unreachable", correlator })
    this.rememberUnreachable(correlator)
    this.compactIfLong()
    return false
  }

  /** Its receipt was answered 2xx: it is owed no more. */
  acknowledged(id: number): void {
    if (!this.owed.delete(id)) return
    this.journal?.append({ kind: "acknowledged", id })
  }

  tokenIssued(token: string, expiresAt: number): void {
    this.journal?.append({ kind: "token", token, expiresAt })
    this.tokens.set(token, expiresAt)
  }

  /** Whether `token` was issued and has not expired at `now` (epoch ms). */
  tokenValid(token: string | undefined, now: number): boolean {
    const expiresAt = token === undefined ? undefined : this.tokens.get(token)
    return expiresAt !== undefined && expiresAt > now
  }

  /** Every token issued so far is expired. */
  expireTokens(): void {
    this.journal?.append({ kind: "tokensExpired" })
    this.tokens.clear()
  }

  /** Closes the journal; the book is no longer written. */
  close(): void {
    this.journal?.close()
  }

  private remember(correlator: string, id: number): void {
    this.correlators.set(correlator, id)
    while (this.correlators.size > this.keptMax) this.correlators.delete(this.correlators.keys().next().value!)
  }

  private rememberUnreachable(correlator: string): void {
    this.unreachable.add(correlator)
    while (this.unreachable.size > this.keptMax) this.unreachable.delete(this.unreachable.values().next().value!)
  }

  private replay(entry: Entry): void {
    switch (entry.kind) {
      case "ids":
        this.reservedBelow = Math.max(this.reservedBelow, entry.below)
        return
      case "taken":
        if (entry.correlator !== "") this.remember(entry.correlator, entry.id)
        if (entry.owed !== undefined) this.owed.set(entry.id, entry.owed)
        return
      case "unreachable":
        this.rememberUnreachable(entry.correlator)
        return
      case "acknowledged":
        this.owed.delete(entry.id)
        return
      case "token":
        this.tokens.set(entry.token, entry.expiresAt)
        return
      case "tokensExpired":
        this.tokens.clear()
    }
  }

  /** What the journal must hold to give back this book: the reserved ids, the live tokens, every correlator known and receipt owed. */
  private *snapshot(): Iterable<Entry> {
    yield { kind: "ids", below: this.reservedBelow }
    const now = Date.now()
    for (const [token, expiresAt] of this.tokens) if (expiresAt > now) yield { kind: "token", token, expiresAt }
    for (const correlator of this.unreachable) yield { kind: "unreachable", correlator }
    const ownerless = new Map(this.owed)
    for (const [correlator, id] of this.correlators) {
      const owed = this.owed.get(id)
      ownerless.delete(id)
      yield owed === undefined ? { kind: "taken", correlator, id } : { kind: "taken", correlator, id, owed }
    }
    // a receipt still owed for a correlator forgotten (beyond keptMax) keeps its place under an empty one
    for (const [id, owed] of ownerless) yield { kind: "taken", correlator: "", id, owed }
  }

  /** Rewrites the journal once it holds far more entries than what is still known. */
  private compactIfLong(): void {
    const known = this.correlators.size + this.unreachable.size + this.owed.size + this.tokens.size
    if (this.journal !== undefined && this.journal.appended > 2 * known + 10_000) {
      this.journal.rewrite(this.snapshot())
    }
  }
}
