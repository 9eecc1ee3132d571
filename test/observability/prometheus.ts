/** Reads the Prometheus text format back, for tests: samples by name and exact label set. */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const samplePattern = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** Every sample line of a scrape (comments skipped); throws on a line that is neither. */
export const parseSamples = (text: string): ReadonlyArray<Sample> =>
  text
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = samplePattern.exec(line)
      if (match === null) throw new Error(`not a Prometheus sample line: ${line}`)
      const labels: Record<string, string> = {}
      for (const [, key, value] of (match[2] ?? "").matchAll(labelPattern)) labels[key!] = value!
      return { name: match[1]!, labels, value: match[3] === "+Inf" ? Infinity : Number(match[3]) }
    })

const sameLabels = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v)

/** The value of the sample with exactly this name and label set; 0 when the series is absent. */
export const sampleValue = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Record<string, string> = {}
): number => samples.find((s) => s.name === name && sameLabels(s.labels, labels))?.value ?? 0
