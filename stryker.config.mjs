// @ts-check
/**
 * Mutation testing of the core (README "Mutation testing"): `npm run test:mutation` (the whole
 * core) or `npm run test:mutation:pure` (src/domain and src/ledger, what CI runs). The scope's
 * files and tests are in test/mutation/scopes.ts.
 */
import { mutationScope } from "./test/mutation/scopes.ts"

const scope = mutationScope()

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  // the test files come from the Vitest configuration, not Stryker's `testFiles`: with `testFiles`
  // Stryker 10.1 activates static mutants (module-level tables) only after the modules have
  // loaded, so they all survive whatever the tests say
  vitest: { configFile: "vitest.mutation.config.ts", related: false },
  coverageAnalysis: "perTest",
  // a 2-core machine, shared
  concurrency: 2,
  mutate: [...scope.mutate],
  // typescript@7 (the native compiler) has no JavaScript API: Stryker's TypeScript checker and
  // its tsconfig rewriting both need one. A mutant that does not type-check runs anyway and is
  // judged by the tests, like any other; the tsconfig name below points nowhere on purpose.
  checkers: [],
  tsconfigFile: "tsconfig.stryker-none.json",
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  clearTextReporter: {
    allowColor: false,
    logTests: false,
    maxTestsToLog: 0,
    reportScoreTable: true,
    reportMutants: true
  },
  tempDirName: ".stryker-tmp",
  // beyond 1.5 times the covering tests' own time: a mutant's infinite loop costs this much per
  // mutant, and a merely slow test on a loaded machine must not read as one
  timeoutMS: 10_000,
  // below 90 % the run fails (CI runs the pure scope)
  thresholds: { high: 90, low: 80, break: 90 }
}
