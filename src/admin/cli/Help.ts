/**
 * What sms-admin prints for help and usage errors: `--help` on stdout, with the root's help
 * listing every command (`org create`, `org show`, ...) rather than only the groups; a usage error
 * on stderr as `error: ...`, the command's usage line and where to read more.
 */
import { Array as Arr, Console, Effect } from "effect"
import { CliOutput, type Command, type HelpDoc } from "effect/cli"

/** The root's help with its groups expanded: one section per group, listing `group command` with its description. */
const listEveryCommand = (app: Command.Command.Any, doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc => {
  if (doc.commandPath !== undefined && doc.commandPath.length > 1) return doc
  const subcommands = app.subcommands.flatMap(({ commands }) =>
    commands.flatMap((group): Array<HelpDoc.SubcommandGroupDoc> => {
      const leaves = group.subcommands
        .flatMap((s) => s.commands)
        .map(
          (c): HelpDoc.SubcommandDoc => ({
            name: `${group.name} ${c.name}`,
            alias: undefined,
            shortDescription: c.shortDescription,
            description: c.description ?? ""
          })
        )
      return Arr.isArrayNonEmpty(leaves) ? [{ group: group.description ?? group.name, commands: leaves }] : []
    })
  )
  return { ...doc, subcommands }
}

/** Presents help, usage errors and the version of `app` as described above. */
export const presenter = (app: Command.Command.Any): CliOutput.Presenter => ({
  present: Effect.fnUntraced(function* (event) {
    const formatter = yield* CliOutput.Formatter
    switch (event._tag) {
      case "Help": {
        const text = formatter.formatHelpDoc(listEveryCommand(app, event.helpDoc))
        // implicit help answers an incomplete command line (`sms-admin org`): a usage error
        return yield* event.reason === "Requested" ? Console.log(text) : Console.error(text)
      }
      case "InvalidInvocation": {
        const path = event.commandPath.join(" ")
        return yield* Console.error(
          [
            ...event.errors.map((e) => `error: ${formatter.formatCliError(e)}`),
            `usage: ${event.helpDoc.usage}`,
            `Run '${path} --help' for its arguments and flags.`
          ].join("\n")
        )
      }
      case "Version":
        return yield* Console.log(`${event.name} ${event.version}`)
    }
  })
})
