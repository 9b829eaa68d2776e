import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{test,commands,events,projections,src}/**/*.spec.ts'],
    // The fault suite kills processes and saturates the machine; it runs on its own (`npm run test:faults`).
    exclude: ['**/node_modules/**', 'test/faults/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
