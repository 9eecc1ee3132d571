/**
 * First start: on a database with no organisation, create the demo organisation (1000 credits,
 * sender DEMO, a key with every permission) and print how to use it. The banner goes to
 * stdout as plain text, not to the logs: it is the one place a secret is shown, on purpose.
 */
import { Effect, Layer, Redacted } from "effect"
import { AdminToken } from "../admin/AdminToken.ts"
import { apiPrefix } from "../api/Api.ts"
import { AppConfig } from "../config/Config.ts"
import { Transactions } from "../db/Transactions.ts"
import { Permissions } from "../domain/Permissions.ts"
import { docsPagePath } from "../http/ApiDocs.ts"
import { Ledger } from "../ledger/Ledger.ts"
import { ApiKeys } from "../organisations/ApiKeys.ts"
import { Organisations } from "../organisations/Organisations.ts"

export const demo = { name: "Demo organisation", sender: "DEMO", credits: 1000 } as const
const seedLockKey = 7_261_300_002

export const seedLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const organisations = yield* Organisations
    const config = yield* AppConfig
    const admin = yield* AdminToken
    const base = `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${config.port}`
    const { locked } = yield* Transactions
    const ledger = yield* Ledger
    const keys = yield* ApiKeys
    const lines: Array<string> = []
    // under a lock: replicas starting at once on an empty database create one demo organisation
    const created = yield* Effect.gen(function* () {
      if (!(yield* organisations.isEmpty)) return undefined
      const org = yield* organisations.create(demo.name, demo.sender)
      yield* ledger.grant(org.id, demo.credits, null)
      return { org, key: yield* keys.issue(org.id, Permissions) }
    }).pipe(locked(seedLockKey))
    if (created !== undefined) {
      const { org, key } = created
      lines.push(
        `Demo organisation ${org.id} created with ${demo.credits} credits and sender ${demo.sender}.`,
        `Demo API key (every permission: ${Permissions.join(", ")}; shown once, only its hash is stored):`,
        `  ${key.apiKey}`,
        `  curl -H "Authorization: Bearer ${key.apiKey}" ${base}${apiPrefix}/balance/`
      )
    }
    switch (admin.origin._tag) {
      case "Generated":
        lines.push(
          `Operator token (generated once for this database and kept, only its hash is stored; shown only now):`,
          `  ${Redacted.value(admin.origin.token)}`
        )
        break
      case "Stored":
        lines.push(
          `Operator token: the one printed at the first start on this database still holds (set SMS_ADMIN_TOKEN to choose one).`
        )
        break
      case "Configured":
        lines.push(`Operator token: SMS_ADMIN_TOKEN.`)
    }
    lines.push(`API docs: ${base}${docsPagePath}`)
    yield* Effect.sync(() => process.stdout.write(`\n${lines.join("\n")}\n\n`))
  })
)
