/** Small numeric helpers shared by the load generators and the report. */

/** The q-quantile (0..1) of the values, nearest rank; NaN when empty. */
export const percentile = (values: ReadonlyArray<number>, q: number): number => {
  if (values.length === 0) return Number.NaN
  const sorted = Float64Array.from(values).sort()
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]!
}

export const round = (x: number, digits = 1): number => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
