/**
 * Actions due at given times, run by one timer whatever their number (a binary min-heap on the
 * due time): the SMSC simulator's late answers, receipts and re-sends without a timer each.
 * The simulator is the provider's side and runs on the wall clock.
 */

interface Entry {
  readonly atMs: number
  readonly order: number
  readonly run: () => void
}

export class Timeline {
  private readonly heap: Array<Entry> = []
  private order = 0
  private timer: NodeJS.Timeout | undefined
  private armedAtMs = Number.POSITIVE_INFINITY

  /** Runs `run` once `delayMs` has passed; actions due at the same time run in the order they were added. */
  after(delayMs: number, run: () => void): void {
    this.push({ atMs: performance.now() + delayMs, order: this.order++, run })
    this.arm()
  }

  /** Forgets every pending action. */
  clear(): void {
    this.heap.length = 0
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.armedAtMs = Number.POSITIVE_INFINITY
  }

  private arm(): void {
    const first = this.heap[0]
    if (first === undefined || first.atMs >= this.armedAtMs) return
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.armedAtMs = first.atMs
    this.timer = setTimeout(() => this.fire(), Math.max(0, first.atMs - performance.now()))
    this.timer.unref()
  }

  private fire(): void {
    this.timer = undefined
    this.armedAtMs = Number.POSITIVE_INFINITY
    const now = performance.now()
    while (this.heap.length > 0 && this.heap[0]!.atMs <= now) this.pop().run()
    this.arm()
  }

  private before(a: Entry, b: Entry): boolean {
    return a.atMs < b.atMs || (a.atMs === b.atMs && a.order < b.order)
  }

  private push(entry: Entry): void {
    const heap = this.heap
    let i = heap.push(entry) - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(heap[i]!, heap[parent]!)) break
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }

  private pop(): Entry {
    const heap = this.heap
    const top = heap[0]!
    const last = heap.pop()!
    if (heap.length > 0) {
      heap[0] = last
      let i = 0
      while (true) {
        const left = 2 * i + 1
        const right = left + 1
        let smallest = i
        if (left < heap.length && this.before(heap[left]!, heap[smallest]!)) smallest = left
        if (right < heap.length && this.before(heap[right]!, heap[smallest]!)) smallest = right
        if (smallest === i) break
        ;[heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!]
        i = smallest
      }
    }
    return top
  }
}
