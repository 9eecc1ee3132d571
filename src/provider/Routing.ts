/** Routing by number prefix across several provider routes: the longest matching prefix wins, `*` matches every number. */

/** Anything served for a set of number prefixes. */
export interface Routed {
  readonly prefixes: ReadonlyArray<string>
}

/** A function answering the route serving a number, or undefined when none does. */
export const makeRouter = <R extends Routed>(routes: ReadonlyArray<R>): ((to: string) => R | undefined) => {
  const table = routes
    .flatMap((route) => route.prefixes.map((prefix) => ({ prefix: prefix === "*" ? "" : prefix, route })))
    .sort((a, b) => b.prefix.length - a.prefix.length)
  return (to) => table.find((entry) => to.startsWith(entry.prefix))?.route
}
