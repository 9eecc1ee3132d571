/** Configuration read from a record instead of the process's environment, the way the tests give it. */
import { ConfigProvider, Effect } from "effect"
import { type AppConfigShape, decodeConfig } from "../../src/config/Config.ts"
import type { Field } from "../../src/config/EnvFields.ts"
import type { ReadText } from "../../src/config/SmppConfig.ts"

type Env = Readonly<Record<string, string>>
type Refused = { readonly ok: false; readonly errors: ReadonlyArray<string> }

/** Reads `field` with `env` as the environment: its value, or its lines. */
export const readEnv = <A>(field: Field<A>, env: Env): { readonly ok: true; readonly value: A } | Refused =>
  Effect.runSync(
    field.pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { ...env } })),
      Effect.match({
        onSuccess: (value) => ({ ok: true, value }) as const,
        onFailure: ({ lines }) => ({ ok: false, errors: lines }) as const
      })
    )
  )

/** The service's configuration decoded from `env` (the routing file read through `readText`, the disk by default). */
export const decodeEnv = (
  env: Env,
  readText?: ReadText
): { readonly ok: true; readonly config: AppConfigShape } | Refused => {
  const decoded = readEnv(decodeConfig(readText), env)
  return decoded.ok ? { ok: true, config: decoded.value } : decoded
}
