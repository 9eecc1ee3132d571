/** The results table (service figure vs ceiling/peer measured in the same run) and the JSON file. */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { round } from "./stats.ts"

export type Target =
  | { readonly kind: "min"; readonly value: number }
  | { readonly kind: "max"; readonly value: number }
  | { readonly kind: "above"; readonly value: number }
  | { readonly kind: "below"; readonly value: number; readonly unit: string }
  | { readonly kind: "atMost"; readonly value: number; readonly unit: string }
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

const targetText = (t: Target): string => {
  switch (t.kind) {
    case "min":
      return `>= ${t.value}`
    case "max":
      return `<= ${t.value}x`
    case "above":
      return `> ${t.value}`
    case "below":
      return `< ${t.value}${t.unit === "" ? "" : ` ${t.unit}`}`
    case "atMost":
      return `<= ${t.value}${t.unit === "" ? "" : ` ${t.unit}`}`
    case "report":
      return "report"
  }
}

const check = (t: Target, x: number | null): boolean | null => {
  if (x === null || Number.isNaN(x)) return null
  switch (t.kind) {
    case "min":
      return x >= t.value
    case "max":
      return x <= t.value
    case "above":
      return x > t.value
    case "below":
      return x < t.value
    case "atMost":
      return x <= t.value
    case "report":
      return null
  }
}

/** A row comparing the service with a baseline of the same run. */
export const compare = (
  scenario: string,
  service: number,
  baseline: number,
  baselineLabel: string,
  target: Target
): Row => {
  const ratio = baseline > 0 ? round(service / baseline, 2) : null
  return { scenario, service, baseline, baselineLabel, ratio, target, pass: check(target, ratio) }
}

/** A row with an absolute target on the service figure (memory, latency). */
export const absolute = (scenario: string, service: number, target: Target): Row => ({
  scenario,
  service,
  baseline: null,
  baselineLabel: "",
  ratio: null,
  target,
  pass: check(target, service)
})

const fmt = (x: number | null): string => (x === null || Number.isNaN(x) ? "-" : String(x))

export const markdownTable = (rows: ReadonlyArray<Row>): string => {
  const lines = ["| scenario | service | ceiling/peer (same run) | ratio | target |", "|---|---:|---:|---:|---|"]
  for (const r of rows) {
    const verdict = r.pass === null ? "" : r.pass ? " ok" : " **MISSED**"
    const baseline = r.baseline === null ? "-" : `${fmt(r.baseline)} (${r.baselineLabel})`
    lines.push(
      `| ${r.scenario} | ${fmt(r.service)} | ${baseline} | ${fmt(r.ratio)} | ${targetText(r.target)}${verdict} |`
    )
  }
  return lines.join("\n")
}

/** Writes bench/results/<ISO date>[-smoke].json and returns its path. */
export const writeResults = (startedAt: Date, smoke: boolean, data: unknown): string => {
  const dir = join(import.meta.dirname, "results")
  mkdirSync(dir, { recursive: true })
  const stamp = startedAt
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replaceAll(":", "-")
  const file = join(dir, `${stamp}${smoke ? "-smoke" : ""}.json`)
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`)
  return file
}
