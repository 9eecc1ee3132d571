import { defineConfig } from "vitest/config"

/**
 * The fault suite (`npm run test:faults`): kills service processes, stops and starts its own
 * throwaway PostgreSQL, fuzzes every route. One file at a time: each one loads the whole machine.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    maxWorkers: 1,
    fileParallelism: false
  }
})
