import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const packagesDir = fileURLToPath(new URL("./packages/", import.meta.url));

// `@flotilla/x` is packages/x/src/index.ts and `@flotilla/x/testing` is packages/x/src/testing.ts.
const alias = [
  {
    find: /^@flotilla\/([\w-]+)\/testing$/,
    replacement: `${packagesDir}$1/src/testing.ts`,
  },
  {
    find: /^@flotilla\/([\w-]+)$/,
    replacement: `${packagesDir}$1/src/index.ts`,
  },
];

/**
 * The end-to-end suite: tests that start real processes (nats-server, the hub, agents, the built
 * CLI, promtool) and so need `pnpm build` and the machine's binaries. Everything else is the unit
 * loop (`pnpm test:unit`), which starts no process: test/unit-guard.ts fails a unit test that tries,
 * naming this list. CONTRIBUTING.md explains the two loops.
 */
const e2e = [
  "test/e2e/**/*.test.ts",
  // helm template starts a process.
  "test/charts/hub-chart-render.test.ts",
  "test/charts/agent-chart-render.test.ts",
  "test/charts/chart-lint.test.ts",
  "test/charts/hub-chart-options.test.ts",
  "packages/agent/test/agent-process-kubernetes.test.ts",
  "packages/agent/test/agent-process.test.ts",
  "packages/agent/test/agent-runtime.test.ts",
  "packages/agent/test/helm-render.test.ts",
  "packages/agent/test/hub-tls.test.ts",
  "packages/agent/test/identity-main.test.ts",
  "packages/agent/test/intent-watcher.test.ts",
  "packages/agent/test/metrics-scrape.test.ts",
  "packages/agent/test/nats-auth.test.ts",
  "packages/cli/test/cli-examples-node-images.test.ts",
  "packages/cli/test/cli-examples-rehearsal.test.ts",
  "packages/cli/test/cli-hub.test.ts",
  "packages/cli/test/cli-input-bounds.test.ts",
  "packages/cli/test/cli-plan-channel.test.ts",
  "packages/hub/test/audit-fallback.test.ts",
  "packages/hub/test/audit-jetstream.test.ts",
  "packages/hub/test/audit-malformed.test.ts",
  "packages/hub/test/audit-refusals.test.ts",
  "packages/hub/test/bundles-content-gc.test.ts",
  "packages/hub/test/chart-fetcher.test.ts",
  "packages/hub/test/bundles-full-store.test.ts",
  "packages/hub/test/bundles-helm.test.ts",
  "packages/hub/test/bundles-kustomize.test.ts",
  "packages/hub/test/bundles-object-reader.test.ts",
  "packages/hub/test/http-server.test.ts",
  "packages/hub/test/git-client.test.ts",
  "packages/hub/test/gitrepo-manager.test.ts",
  "packages/hub/test/git-webhook.test.ts",
  "packages/hub/test/intents-jetstream.test.ts",
  "packages/hub/test/jetstream-replicas.test.ts",
  "packages/hub/test/jetstream-store.test.ts",
  "packages/hub/test/lease-bucket-jetstream.test.ts",
  "packages/hub/test/hub-replicas.test.ts",
  "packages/hub/test/hub-status-replicas.test.ts",
  "packages/hub/test/metrics-scrape.test.ts",
  "packages/hub/test/nats-auth.test.ts",
  "packages/hub/test/nats-setup-from.test.ts",
  "packages/hub/test/prometheus-client.test.ts",
  "packages/hub/test/update-queue.test.ts",
  "packages/node/test/run-tool.test.ts",
  "packages/protocol/test/generated.test.ts",
  "packages/testkit/test/nats-cluster.test.ts",
  "packages/testkit/test/nats-server.test.ts",
  "packages/testkit/test/prometheus-server.test.ts",
  "packages/testkit/test/tools.test.ts",
];

export default defineConfig({
  resolve: { alias },
  test: {
    pool: "threads",
    testTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [
            "packages/*/test/**/*.test.ts",
            "test/docs/**/*.test.ts",
            "test/charts/**/*.test.ts",
          ],
          exclude: e2e,
          setupFiles: ["test/unit-guard.ts", "test/property-seed.ts"],
          // Test files share their worker's module graph instead of importing everything afresh:
          // the unit loop takes about a minute instead of four. Unit tests therefore leave no
          // global state behind (no mocked modules, no patched globals, no fake timers left on).
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: e2e,
        },
      },
    ],
  },
});
