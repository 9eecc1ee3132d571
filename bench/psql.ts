/** SQL from the harness through the `psql` client: scalar queries, script files, database lifecycle. */
import { execFile } from "node:child_process"

const run = (args: ReadonlyArray<string>, input?: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = execFile(
      "psql",
      ["-X", "-q", "-v", "ON_ERROR_STOP=1", ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`psql failed: ${stderr.trim() || error.message}`))
        else resolve(stdout)
      }
    )
    if (input !== undefined) child.stdin?.end(input)
  })

/** The rows of one query, as tab-separated text fields. */
export const query = async (url: string, sql: string): Promise<Array<Array<string>>> => {
  const out = await run(["-d", url, "-tA", "-F", "\t", "-c", sql])
  return out
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split("\t"))
}

/** The first field of the first row. */
export const scalar = async (url: string, sql: string): Promise<string> => {
  const rows = await query(url, sql)
  const value = rows[0]?.[0]
  if (value === undefined) throw new Error(`no row for: ${sql}`)
  return value
}

/** Runs a script file with psql variables (`-v name=value`). */
export const runFile = (url: string, file: string, vars: Readonly<Record<string, string | number>>): Promise<string> =>
  run(["-d", url, "-f", file, ...Object.entries(vars).flatMap(([k, v]) => ["-v", `${k}=${v}`])])

/** The URL of another database on the same server. */
export const withDatabase = (url: string, database: string): string => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

export const createDatabase = (adminUrl: string, name: string) => query(adminUrl, `CREATE DATABASE ${name}`)

export const dropDatabase = (adminUrl: string, name: string) =>
  query(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
