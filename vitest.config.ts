import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string): string =>
  fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      "@flotilla/core": src("core"),
      "@flotilla/protocol": src("protocol"),
      "@flotilla/node": src("node"),
      "@flotilla/testkit": src("testkit"),
      "@flotilla/hub": src("hub"),
      "@flotilla/agent": src("agent"),
    },
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    pool: "threads",
    testTimeout: 30_000,
  },
});
