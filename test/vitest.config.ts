import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * What `npm run test:slow` runs (test/vitest.slow.config.ts) and `npm test` leaves out: tests that
 * wait in real time for a control plane, a browser or child processes.
 */
export const SLOW_TESTS = [
  "test/faults/**/*.test.ts",
  "test/e2e/**/*.test.ts",
  "test/apps/control-plane/dashboard/**/*.test.ts",
  "test/apps/cli/binary.test.ts",
];

/** The settings both commands share, with the tests each runs. */
export function testConfig(tests: { include: string[]; exclude: string[] }) {
  return defineConfig({
    root: fileURLToPath(new URL("..", import.meta.url)),
    test: {
      ...tests,
      // One migrated database per run; each suite's test database is a copy of it (test-db.ts).
      globalSetup: ["test/helpers/database-template.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Suites start real servers and databases; two workers fit the 2-core machines.
      pool: "forks",
      maxWorkers: 2,
    },
  });
}

export default testConfig({ include: ["test/**/*.test.ts"], exclude: ["**/node_modules/**", ...SLOW_TESTS] });
