/** A bounded poll in real time, for tests of the background fibers on the system clock. */

/** Reads until `done` holds; fails with the last value read after `timeoutMs` of real time. */
export const eventually = async <A>(
  read: () => Promise<A>,
  done: (a: A) => boolean,
  options: { readonly timeoutMs?: number; readonly intervalMs?: number; readonly what?: string } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000)
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? "condition"} not reached in ${options.timeoutMs ?? 10_000} ms; last: ${JSON.stringify(value)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50))
  }
}
