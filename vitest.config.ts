import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{test,commands,events,projections,src}/**/*.spec.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
