/**
 * The layer check (.dependency-cruiser.mjs): the service's own imports pass it, and it does fail
 * on what it forbids (an import running upward, to a peer of the same layer, a cycle, a folder
 * with no place in the layers, a type-only import counted like any other), shown on a scratch tree.
 */
import { cruise, type ICruiseOptions, type ICruiseResult } from "dependency-cruiser"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

interface LayerConfig {
  readonly forbidden: NonNullable<NonNullable<ICruiseOptions["ruleSet"]>["forbidden"]>
  readonly options: ICruiseOptions
}

const repository = resolve(import.meta.dirname, "../..")
const configModule = pathToFileURL(join(repository, ".dependency-cruiser.mjs")).href
const { default: config } = (await import(configModule)) as { readonly default: LayerConfig }

/** The violations of the layer rules in `baseDir`'s src/, as `rule: from -> to`. */
const violations = async (baseDir: string): Promise<ReadonlyArray<string>> => {
  const { output } = await cruise(["src"], {
    ...config.options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: config.forbidden }
  })
  const result = output as ICruiseResult
  return result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
}

describe("the layer check", () => {
  it("passes on the service's own imports", async () => {
    expect(await violations(repository)).toEqual([])
  }, 120_000)

  const scratch = mkdtempSync(join(tmpdir(), "layers-"))
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(scratch, path)), { recursive: true })
    writeFileSync(join(scratch, path), text)
  }

  it("fails on an upward import, an import between peers, a cycle, an unknown folder, type-only imports included", async () => {
    write("src/http/Handler.ts", `export const handler = 1\nexport type Body = { readonly a: number }\n`)
    write("src/domain/Rule.ts", `import { handler } from "../http/Handler.ts"\nexport const rule = handler\n`)
    write("src/ledger/Ledger.ts", `import type { Body } from "../http/Handler.ts"\nexport type Entry = Body\n`)
    write(
      "src/ledger/Lots.ts",
      `import { organisation } from "../organisations/Organisation.ts"\nexport const lots = organisation\n`
    )
    write("src/organisations/Organisation.ts", `export const organisation = 1\n`)
    write("src/messages/A.ts", `import { b } from "./B.ts"\nexport const a = () => b\n`)
    write("src/messages/B.ts", `import { a } from "./A.ts"\nexport const b = () => a\n`)
    write(
      "src/misc/Loose.ts",
      `import { organisation } from "../organisations/Organisation.ts"\nexport const loose = organisation\n`
    )
    expect([...(await violations(scratch))].sort()).toEqual([
      "layer-domain: src/domain/Rule.ts -> src/http/Handler.ts",
      "layer-ledger: src/ledger/Ledger.ts -> src/http/Handler.ts",
      "layer-ledger: src/ledger/Lots.ts -> src/organisations/Organisation.ts",
      "no-circular: src/messages/A.ts -> src/messages/B.ts",
      "unknown-folder: src/misc/Loose.ts -> src/organisations/Organisation.ts"
    ])
  }, 120_000)
})
