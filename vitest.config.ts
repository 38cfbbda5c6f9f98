import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const packagesDir = fileURLToPath(new URL("./packages/", import.meta.url));

export default defineConfig({
  resolve: {
    // `@flotilla/x` is packages/x/src/index.ts and `@flotilla/x/testing` is packages/x/src/testing.ts.
    alias: [
      {
        find: /^@flotilla\/([\w-]+)\/testing$/,
        replacement: `${packagesDir}$1/src/testing.ts`,
      },
      {
        find: /^@flotilla\/([\w-]+)$/,
        replacement: `${packagesDir}$1/src/index.ts`,
      },
    ],
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    pool: "threads",
    testTimeout: 30_000,
  },
});
