/** The results table (service figure vs ceiling/peer measured in the same run) and the JSON file. */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { round } from "./stats.ts"

export type Target =
  | { readonly kind: "min"; readonly value: number }
  | { readonly kind: "max"; readonly value: number }
  | { readonly kind: "above"; readonly value: number }
  | { readonly kind: "below"; readonly value: number }
  | { readonly kind: "report" }

export interface Row {
  readonly scenario: string
  readonly service: number
  readonly baseline: number | null
  readonly baselineLabel: string
  /** service / baseline, or the service figure itself for absolute targets (memory). */
  readonly ratio: number | null
  readonly target: Target
  readonly pass: boolean | null
}

const targetText = (t: Target): string =>
  t.kind === "min" ? `>= ${t.value}` : t.kind === "max" ? `<= ${t.value}x` : t.kind === "above" ? `> ${t.value}` : t.kind === "below" ? `< ${t.value} MB` : "report"

const check = (t: Target, x: number | null): boolean | null => {
  if (x === null || Number.isNaN(x) || t.kind === "report") return null
  return t.kind === "min" ? x >= t.value : t.kind === "max" ? x <= t.value : t.kind === "above" ? x > t.value : x < t.value
}

/** A row comparing the service with a baseline of the same run. */
export const compare = (scenario: string, service: number, baseline: number, baselineLabel: string, target: Target): Row => {
  const ratio = baseline > 0 ? round(service / baseline, 2) : null
  return { scenario, service, baseline, baselineLabel, ratio, target, pass: check(target, ratio) }
}

/** A row with an absolute target on the service figure (memory). */
export const absolute = (scenario: string, service: number, target: Target): Row =>
  ({ scenario, service, baseline: null, baselineLabel: "", ratio: null, target, pass: check(target, service) })

const fmt = (x: number | null): string => (x === null || Number.isNaN(x) ? "-" : String(x))

export const markdownTable = (rows: ReadonlyArray<Row>): string => {
  const lines = [
    "| scenario | service | ceiling/peer (same run) | ratio | target |",
    "|---|---:|---:|---:|---|"
  ]
  for (const r of rows) {
    const verdict = r.pass === null ? "" : r.pass ? " ok" : " **MISSED**"
    const baseline = r.baseline === null ? "-" : `${fmt(r.baseline)} (${r.baselineLabel})`
    lines.push(`| ${r.scenario} | ${fmt(r.service)} | ${baseline} | ${fmt(r.ratio)} | ${targetText(r.target)}${verdict} |`)
  }
  return lines.join("\n")
}

/** Writes bench/results/<ISO date>[-smoke].json and returns its path. */
export const writeResults = (startedAt: Date, smoke: boolean, data: unknown): string => {
  const dir = join(import.meta.dirname, "results")
  mkdirSync(dir, { recursive: true })
  const stamp = startedAt.toISOString().replace(/\.\d{3}Z$/, "Z").replaceAll(":", "-")
  const file = join(dir, `${stamp}${smoke ? "-smoke" : ""}.json`)
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`)
  return file
}
