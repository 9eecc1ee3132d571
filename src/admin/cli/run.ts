/** One run of sms-admin: parse the command line, call the operator API, print; the result is the exit status. */
import { Effect } from "effect"
import { CliConfig, CliOutput, Command, GlobalFlag } from "effect/cli"
import { readFileSync } from "node:fs"
import { smsAdmin } from "./Commands.ts"
import { presenter } from "./Help.ts"
import { exitCodes } from "./Root.ts"

const { version } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  readonly version: string
}

/**
 * Runs the arguments after the program name. Exit status: 0 done (or help asked for), 1 the API
 * answered an error, 2 the service could not be reached, 64 a usage error (help printed on stderr).
 */
export const runCli = (argv: ReadonlyArray<string>) =>
  Command.runWith(smsAdmin, { version })(argv).pipe(
    Effect.as<number>(exitCodes.ok),
    Effect.catch((error) => Effect.succeed(error._tag === "CommandFailed" ? error.exitCode : exitCodes.usage)),
    Effect.provide([
      CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] }),
      CliOutput.layerPresenter(presenter(smsAdmin))
    ])
  )
