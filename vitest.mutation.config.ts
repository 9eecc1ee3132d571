import { BaseSequencer, type TestSpecification } from "vitest/node"
import { defineConfig } from "vitest/config"
import { mutationScope } from "./test/mutation/scopes.ts"

/**
 * The test run Stryker drives (`npm run test:mutation`): only the test files that cover the
 * mutated scope, in the scope's order (fast unit tests first), one file at a time.
 */
const scope = mutationScope()

/** Rank of a file in the scope's list: the index of the first pattern it falls under. */
const rankOf = (path: string): number => {
  const index = scope.tests.findIndex((pattern) => {
    const [dir, name] = [pattern.slice(0, pattern.lastIndexOf("/") + 1), pattern.slice(pattern.lastIndexOf("/") + 1)]
    const file = path.slice(path.lastIndexOf("/") + 1)
    return path.includes(`/${dir}`) && (name === file || (name.startsWith("*") && file.endsWith(name.slice(1))))
  })
  return index === -1 ? scope.tests.length : index
}

class ScopeOrder extends BaseSequencer {
  override sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    return Promise.resolve(
      [...files].sort((a, b) => rankOf(a.moduleId) - rankOf(b.moduleId) || a.moduleId.localeCompare(b.moduleId))
    )
  }
}

export default defineConfig({
  test: {
    include: [...scope.tests],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    sequence: { sequencer: ScopeOrder }
  }
})
