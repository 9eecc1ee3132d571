/**
 * A service process's log, read back from its output: its JSON lines (level, message, time);
 * the other lines (the start-up banner) are skipped. For the fault tests that count what a fault
 * made the service log.
 */

export interface LogLine {
  readonly level: string
  /** The message (the first part of a message logged with several). */
  readonly message: string
  /** Epoch ms. */
  readonly at: number
}

const parse = (line: string): Array<LogLine> => {
  try {
    const json = JSON.parse(line) as {
      readonly level?: unknown
      readonly message?: unknown
      readonly timestamp?: unknown
    }
    const message = Array.isArray(json.message) ? json.message[0] : json.message
    return typeof json.level === "string" && typeof json.timestamp === "string"
      ? [{ level: json.level, message: String(message), at: Date.parse(json.timestamp) }]
      : []
  } catch {
    return []
  }
}

/** The JSON log lines of `stdout`, in order. */
export const logLines = (stdout: string): ReadonlyArray<LogLine> =>
  stdout.split("\n").flatMap((line) => (line.startsWith("{") ? parse(line) : []))

/** How many lines of `level` there are per message. */
export const countByMessage = (lines: ReadonlyArray<LogLine>, level: string): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const line of lines) if (line.level === level) counts[line.message] = (counts[line.message] ?? 0) + 1
  return counts
}
