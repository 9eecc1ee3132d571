/**
 * Mutation testing (`npm run test:mutation`, README "Mutation testing"): which source files each
 * scope mutates, and the test files that cover them. Both the Stryker configuration and the
 * Vitest configuration of the mutation run read this table, so they cannot disagree.
 *
 * The test files are listed fastest first and run in this order (vitest.mutation.config.ts): a
 * mutant stops at its first failing test, so a cheap unit test kills it before any file boots an
 * embedded database.
 */
export interface MutationScope {
  readonly mutate: ReadonlyArray<string>
  readonly tests: ReadonlyArray<string>
}

/**
 * The fast, pure part (CI): the domain rules and the credit ledger, with the unit tests and the
 * ledger's worked examples (its model-based test, 200 random sequences, is in the core scope).
 */
const pure: MutationScope = {
  mutate: ["src/domain/**/*.ts", "src/ledger/**/*.ts", "src/http/Representations.ts"],
  tests: [
    "test/domain/*.test.ts",
    "test/http/representations.test.ts",
    "test/ledger/ledger.test.ts",
    "test/ledger/journal-partitions.test.ts"
  ]
}

/**
 * The whole core of issue 12: the pure part plus keys, idempotency, settlement and batch cursors,
 * with the tests written at the level of each (services over the embedded database). The HTTP
 * suites cover the same code too, but every one of their requests goes through the keys and most
 * through idempotency: a mutant there would rerun hundreds of them, hours on two cores.
 */
const core: MutationScope = {
  mutate: [
    ...pure.mutate,
    "src/idempotency/**/*.ts",
    "src/organisations/ApiKeys.ts",
    "src/messages/Settlement.ts",
    "src/batches/Cursor.ts"
  ],
  tests: [
    "test/domain/*.test.ts",
    "test/idempotency/*.test.ts",
    "test/batches/cursor.test.ts",
    "test/http/representations.test.ts",
    "test/ledger/ledger.test.ts",
    "test/organisations/*.test.ts",
    "test/messages/settlement.test.ts",
    "test/messages/erasure.test.ts",
    "test/ledger/journal-partitions.test.ts",
    "test/ledger/ledger.model.test.ts"
  ]
}

export const mutationScopes = { pure, core } as const
export type MutationScopeName = keyof typeof mutationScopes

/** The scope named by SMS_MUTATION_SCOPE (default `core`). */
export const mutationScope = (name: string | undefined = process.env.SMS_MUTATION_SCOPE): MutationScope => {
  const key = name ?? "core"
  if (key !== "pure" && key !== "core") throw new Error(`SMS_MUTATION_SCOPE must be pure or core, not ${key}`)
  return mutationScopes[key]
}
