/**
 * fleet.yaml `dependsOn` end to end (docs/semantics.md#dependencies-between-bundles): nats-server,
 * the hub, simulated agents and the built CLI. Bundle `app` depends on `db`; on a cluster where
 * `db` never becomes Ready, `app` is never released and the CLI says why; where `db` is Ready, `app`
 * follows. A cycle applied through the CLI exits 2 naming it.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-depends-on-"));
  e2e = await startE2E({ hubLogLevel: "info" });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("ok-", 1, { env: "prod" }),
      clusters(
        "stuck-",
        1,
        { env: "prod" },
        { failures: { neverReady: ["db"] } },
      ),
    ]),
  );
  await e2e.connected(2);
});

afterEach(() =>
  Promise.all([e2e.stop(), rm(work, { recursive: true, force: true })]),
);

/** A bundle directory: fleet.yaml lines and one ConfigMap. */
async function bundleDir(name: string, fleetYaml: string[]): Promise<string> {
  const dir = join(work, name);
  await mkdir(dir);
  await writeFile(join(dir, "fleet.yaml"), [...fleetYaml, ""].join("\n"));
  await writeFile(
    join(dir, "config.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: b\n`,
  );
  return dir;
}

interface ClusterView {
  readonly cluster: string;
  readonly state: string;
  readonly releasedRevision?: string;
  readonly held?: string;
  readonly message: string;
}

async function clustersOf(bundle: string): Promise<Map<string, ClusterView>> {
  const got = JSON.parse(
    await e2e.ok("bundle", "get", bundle, "-o", "json"),
  ) as {
    clusters: ClusterView[];
  };
  return new Map(got.clusters.map((c) => [c.cluster, c]));
}

describe("dependsOn across simulated agents", () => {
  it("releases app on a cluster only once db is Ready there, and shows the hold", async () => {
    const db = await bundleDir("db", [
      "defaultNamespace: data",
      "labels: { tier: data }",
      "targets:",
      "  - clusterSelector: {}",
    ]);
    const app = await bundleDir("app", [
      "defaultNamespace: web",
      "dependsOn:",
      "  - name: db",
      "targets:",
      "  - clusterSelector: {}",
    ]);
    await e2e.ok("bundle", "apply", db);
    await e2e.ok("bundle", "apply", app);

    // app becomes Ready where db is.
    await waitFor(
      async () =>
        (await clustersOf("app")).get("ok-01")?.state ===
        "BUNDLE_CLUSTER_STATE_READY",
      { timeoutMs: 30_000, intervalMs: 200, message: "app Ready on ok-01" },
    );
    expect((await clustersOf("db")).get("ok-01")?.state).toBe(
      "BUNDLE_CLUSTER_STATE_READY",
    );

    // db applied on stuck-01 but never Ready there: app is held, never released.
    await waitFor(
      async () =>
        (await clustersOf("app")).get("stuck-01")?.message ===
        'waiting for dependencies: bundle "db" is NotReady',
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: "app held on stuck-01 for db NotReady",
      },
    );
    const stuck = (await clustersOf("app")).get("stuck-01");
    expect(stuck).toMatchObject({
      state: "BUNDLE_CLUSTER_STATE_PENDING",
      held: "HOLD_REASON_DEPENDENCIES_NOT_READY",
    });
    expect(stuck?.releasedRevision).toBeUndefined();
    const dbStuck = (await clustersOf("db")).get("stuck-01");
    expect(dbStuck?.state).toBe("BUNDLE_CLUSTER_STATE_NOT_READY");

    const text = await e2e.ok("bundle", "get", "app");
    expect(text).toContain('  Depends on: bundle "db"');
    expect(text).toMatch(
      /\nstuck-01 +All +Pending +- +- +DependenciesNotReady +waiting for dependencies: bundle "db" is NotReady\n/,
    );
    expect(await e2e.ok("bundle", "list")).toMatch(/^db .* tier=data$/m);

    // The hub's releases, in the order it made them: db before app on ok-01, app never on stuck-01.
    const releases = e2e
      .hub()
      .lines.filter((l) => l.includes('"msg":"Bundle released"'))
      .map((l) => JSON.parse(l) as { bundle: string; cluster: string })
      .map((r) => `${r.bundle}@${r.cluster}`);
    expect(releases.filter((r) => r.endsWith("@ok-01"))).toEqual([
      "db@ok-01",
      "app@ok-01",
    ]);
    expect(releases).toContain("db@stuck-01");
    expect(releases).not.toContain("app@stuck-01");
  }, 90_000);

  it("refuses a cycle applied through the CLI with exit 2, naming it", async () => {
    const a = await bundleDir("a", [
      "labels: { tier: web }",
      "dependsOn:",
      "  - selector: { matchLabels: { tier: data } }",
      "targets:",
      "  - clusterSelector: {}",
    ]);
    await e2e.ok("bundle", "apply", a);
    const b = await bundleDir("b", [
      "labels: { tier: data }",
      "dependsOn:",
      "  - name: a",
      "targets:",
      "  - clusterSelector: {}",
    ]);
    const result = await e2e.cli("bundle", "apply", b);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${join(b, "fleet.yaml")}: dependsOn: forms a dependency cycle: b → a → b`,
    );
    const list = await e2e.cli("bundle", "get", "b");
    expect(list.code).not.toBe(0);
  });
});
