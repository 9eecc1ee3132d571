/**
 * Runs sms-admin in-process (src/admin/cli/run.ts) against an in-process app: its HTTP calls go to
 * the app's handler, its environment is the one given, its output is captured.
 */
import { ConfigProvider, Effect, FileSystem, Layer, Path, Stdio, Terminal } from "effect"
import { CliOutput } from "effect/cli"
import type { HttpClient } from "effect/http"
import { ChildProcessSpawner } from "effect/process"
import { TestConsole } from "effect/testing"
import { runCli } from "../../src/admin/cli/run.ts"

export interface CliResult {
  readonly code: number
  /** What went to stdout, each printed chunk ending with a newline. */
  readonly stdout: string
  readonly stderr: string
}

/** The platform services a command line needs, none of which these runs use. */
const platform = Layer.mergeAll(
  FileSystem.layerNoop({}),
  Path.layer,
  Stdio.layerTest({}),
  Layer.succeed(
    Terminal.Terminal,
    Terminal.make({
      columns: Effect.succeed(80),
      rows: Effect.succeed(24),
      size: Effect.die("no terminal in tests"),
      readInput: Effect.die("no terminal input in tests"),
      readLine: Effect.die("no terminal input in tests"),
      display: () => Effect.void
    })
  ),
  Layer.succeed(
    ChildProcessSpawner.ChildProcessSpawner,
    ChildProcessSpawner.make(() => Effect.die("no child processes in tests"))
  ),
  CliOutput.layer(CliOutput.defaultFormatter({ colors: false }))
)

const lines = (printed: ReadonlyArray<unknown>) => printed.map((chunk) => `${String(chunk)}\n`).join("")

/** Runs `argv` with `env` (SMS_ADMIN_URL, SMS_ADMIN_TOKEN) over `http`. */
export const runIn = (
  http: Layer.Layer<HttpClient.HttpClient>,
  argv: ReadonlyArray<string>,
  env: Record<string, string>
): Promise<CliResult> =>
  Effect.gen(function* () {
    const code = yield* runCli(argv)
    return { code, stdout: lines(yield* TestConsole.logLines), stderr: lines(yield* TestConsole.errorLines) }
  }).pipe(
    Effect.provide([platform, http, TestConsole.layer, ConfigProvider.layer(ConfigProvider.fromEnv({ env }))]),
    Effect.runPromise
  )
