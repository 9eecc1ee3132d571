/** Routing by number prefix across several provider routes: the longest matching prefix wins, `*` matches every number. */

/** Anything served for a set of number prefixes. */
export interface Routed {
  readonly prefixes: ReadonlyArray<string>
}

/** Every prefix of `routes` with its route, longest first (`""` for `*`): the order a number is matched in. */
export const prefixTable = <R extends Routed>(
  routes: ReadonlyArray<R>
): ReadonlyArray<{ readonly prefix: string; readonly route: R }> =>
  routes
    .flatMap((route) => route.prefixes.map((prefix) => ({ prefix: prefix === "*" ? "" : prefix, route })))
    .sort((a, b) => b.prefix.length - a.prefix.length)

/** A function answering the route serving a number, or undefined when none does. */
export const makeRouter = <R extends Routed>(routes: ReadonlyArray<R>): ((to: string) => R | undefined) => {
  const table = prefixTable(routes)
  return (to) => table.find((entry) => to.startsWith(entry.prefix))?.route
}
