import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // the fault suite has its own command (npm run test:faults) and configuration
    exclude: ["test/faults/**", "**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file starts its own embedded database; two at a time fits the 2-core machines.
    maxWorkers: 2
  }
})
