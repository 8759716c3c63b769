import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['__test__/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Each file in its own child process (the addon owns threads and child
    // processes); one file at a time: CI machines have 2 cores and the suites
    // measure timing.
    pool: 'forks',
    fileParallelism: false,
  },
})
