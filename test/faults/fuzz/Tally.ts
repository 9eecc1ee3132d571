/** Counts of a fuzz run (per route, per status, per kind of request) and its failures, printed so a run can be read and replayed. */

export interface Failure {
  readonly index: number
  readonly request: string
  readonly problems: ReadonlyArray<string>
}

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)

export const makeTally = () => {
  const byRoute = new Map<string, Map<string, number>>()
  const byStatus = new Map<string, number>()
  const byKind = new Map<string, number>()
  const msByRoute = new Map<string, number>()
  const failures: Array<Failure> = []
  let count = 0
  return {
    /** Records one exchange: what was sent (route, kind), what came back (a status, or "none") after `ms`, and its problems. */
    record: (route: string, kind: string, status: string, ms: number, failure?: Failure) => {
      count++
      msByRoute.set(route, (msByRoute.get(route) ?? 0) + ms)
      const statuses = byRoute.get(route) ?? new Map<string, number>()
      bump(statuses, status)
      byRoute.set(route, statuses)
      bump(byStatus, status)
      bump(byKind, kind)
      if (failure !== undefined) failures.push(failure)
    },
    get count() {
      return count
    },
    failures: (): ReadonlyArray<Failure> => failures,
    perRoute: (route: string) => [...(byRoute.get(route)?.values() ?? [])].reduce((a, b) => a + b, 0),
    /** The report: one line per route with its statuses, then the totals. */
    report: (title: string): string => {
      const sorted = (m: Map<string, number>) =>
        [...m]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, n]) => `${k}:${n}`)
          .join(" ")
      const width = Math.max(...[...byRoute.keys()].map((k) => k.length))
      return [
        title,
        ...[...byRoute]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(
            ([route, statuses]) =>
              `  ${route.padEnd(width)}  ${String(Math.round((msByRoute.get(route) ?? 0) / [...statuses.values()].reduce((a, b) => a + b, 0))).padStart(5)} ms  ${sorted(statuses)}`
          ),
        `  statuses: ${sorted(byStatus)}`,
        `  kinds:    ${sorted(byKind)}`,
        `  failures: ${failures.length}`
      ].join("\n")
    }
  }
}

export type Tally = ReturnType<typeof makeTally>

/** Runs `work` on every item of `items`, at most `concurrency` at a time. */
export const runPool = async <A>(items: Iterable<A>, concurrency: number, work: (item: A) => Promise<void>) => {
  const iterator = items[Symbol.iterator]()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let next = iterator.next(); next.done !== true; next = iterator.next()) await work(next.value)
    })
  )
}
