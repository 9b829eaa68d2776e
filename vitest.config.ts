import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{test,commands,events,projections,src}/**/*.spec.ts'],
    // The fault suite kills processes and saturates the machine; it runs on its own (`npm run test:faults`).
    exclude: ['**/node_modules/**', 'test/faults/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
    // Files share one worker's module cache instead of each importing the gateway afresh (that was ~110 s of a
    // ~600 s run on 2 cores). Nothing here relies on fresh modules: no file mocks modules or changes process.env,
    // and each builds its own gateway, schema and key prefix.
    isolate: false,
  },
});
