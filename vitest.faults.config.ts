import { defineConfig } from 'vitest/config';

// The fault suite: real gateway processes under fuzzing, kills and load. One file at a time, because each
// measures the machine (event-loop canaries, latency budgets) and would distort the others.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.fault.spec.ts'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
