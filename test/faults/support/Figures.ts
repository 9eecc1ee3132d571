/**
 * The figures of a fault run, printed as one line per test (`[fault figures] <test> {...}`), so
 * that the README can quote the last run's. Durations are in seconds, to one decimal.
 */
export const seconds = (ms: number): number => Math.round(ms / 100) / 10

export const printFigures = (test: string, figures: Readonly<Record<string, unknown>>): void => {
  console.log(`[fault figures] ${test} ${JSON.stringify({ date: new Date().toISOString(), ...figures })}`)
}
