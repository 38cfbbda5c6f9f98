/**
 * Metric gates between the partitions of a bundle end to end (docs/semantics.md#partition-gates):
 * a real Prometheus (Debian's package) scrapes a metrics target whose error-rate series the test
 * drives, and the hub, started with --prometheus-url, measures the gate after the canary partition
 * of a Fleet-style rollout, with nats-server, simulated agents and the built CLI. While the
 * canaries' errors stay low the gate passes and the second partition is released; a second
 * revision rolled out while they are high fails the gate, the second partition never gets it, and
 * `bundle get` says why.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  startMetricsTarget,
  startPrometheus,
  waitFor,
  type MetricsTarget,
  type PrometheusServer,
} from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let target: MetricsTarget;
let prometheus: PrometheusServer;
let work: string;

const ERRORS = "app_error_ratio";

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-partition-gates-"));
  target = await startMetricsTarget();
  prometheus = await startPrometheus({
    targets: [target.address],
    scrapeIntervalMs: 500,
  });
  e2e = await startE2E({
    hubArgs: ["--prometheus-url", prometheus.url, "--prometheus-timeout", "5s"],
    hubLogLevel: "info",
  });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 2, { ring: "canary" }),
      clusters("prod-", 2, { ring: "prod" }),
    ]),
  );
  await e2e.connected(4);
});

afterEach(() =>
  Promise.all([
    e2e.stop(),
    prometheus.close(),
    target.close(),
    rm(work, { recursive: true, force: true }),
  ]),
);

/** Sets the canaries' error ratio and waits until Prometheus has scraped it. */
async function canaryErrors(value: number): Promise<void> {
  for (const cluster of ["canary-01", "canary-02"])
    target.set(ERRORS, { cluster }, value);
  await prometheus.waitForValue(
    `max(${ERRORS}{cluster=~"canary-.*"})`,
    (samples) => samples[0]?.value === value,
  );
}

/** The bundle directory: a fleet.yaml with two partitions and a gate after the canary. */
async function bundleDir(data: string): Promise<string> {
  const dir = join(work, "web");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "fleet.yaml"),
    [
      "defaultNamespace: web",
      "targets:",
      "  - clusterSelector: {}",
      "rolloutStrategy:",
      "  partitions:",
      "    - name: canary",
      "      clusterSelector: { matchLabels: { ring: canary } }",
      "    - name: prod",
      "      clusterSelector: { matchLabels: { ring: prod } }",
      "  gates:",
      "    - name: errors",
      "      type: Metric",
      `      query: 'max(${ERRORS}{cluster=~"{{clusters}}"})'`,
      '      successCondition: "result[0] < 0.01"',
      '      failureCondition: "result[0] >= 0.05"',
      "      interval: 1s",
      "      count: 2",
      "",
    ].join("\n"),
  );
  await writeFile(
    join(dir, "config.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: "${data}"\n`,
  );
  return dir;
}

interface Status {
  readonly bundle: { readonly revision: string };
  readonly clusters: readonly {
    readonly cluster: string;
    readonly state: string;
    readonly releasedRevision?: string;
    readonly held?: string;
    readonly message: string;
  }[];
  readonly partitions: readonly {
    readonly name: string;
    readonly gates?: readonly {
      readonly gate: string;
      readonly verdict: string;
      readonly query: string;
      readonly measurements?: readonly {
        readonly values?: readonly number[];
        readonly verdict: string;
      }[];
      readonly message: string;
    }[];
  }[];
  readonly gateFailed?: string;
}

async function status(): Promise<Status> {
  return JSON.parse(
    await e2e.ok("bundle", "get", "web", "-o", "json"),
  ) as Status;
}

const READY = "BUNDLE_CLUSTER_STATE_READY";

describe("metric gates between bundle partitions against a real Prometheus", () => {
  it("releases prod after the canary's gate passes, and halts a revision whose gate fails", async () => {
    await canaryErrors(0.002);
    await e2e.ok("bundle", "apply", await bundleDir("1"));

    // Errors low: the gate passes after two measurements and prod gets the revision.
    await waitFor(
      async () => {
        const s = await status();
        return (
          s.clusters.length === 4 &&
          s.clusters.every(
            (c) =>
              c.state === READY && c.releasedRevision === s.bundle.revision,
          )
        );
      },
      { timeoutMs: 60_000, intervalMs: 250, message: "every cluster Ready" },
    );
    const first = await status();
    const passed = first.partitions[0]?.gates?.[0];
    expect(passed).toMatchObject({
      gate: "errors",
      verdict: "Passed",
      query: `max(${ERRORS}{cluster=~"canary-01|canary-02"})`,
    });
    expect(passed?.measurements?.map((m) => [m.values, m.verdict])).toEqual([
      [[0.002], "MEASUREMENT_VERDICT_SUCCESSFUL"],
      [[0.002], "MEASUREMENT_VERDICT_SUCCESSFUL"],
    ]);
    expect(first.partitions[1]?.gates ?? []).toEqual([]);
    const rev1 = first.bundle.revision;

    // A second revision while the canaries' errors are high: the gate fails, prod keeps rev1.
    await canaryErrors(0.2);
    await e2e.ok("bundle", "apply", await bundleDir("2"));
    await waitFor(async () => (await status()).gateFailed !== undefined, {
      timeoutMs: 60_000,
      intervalMs: 250,
      message: "the gate after the canary failed",
    });
    const second = await status();
    expect(second.bundle.revision).not.toBe(rev1);
    expect(second.gateFailed).toContain(
      'gate "errors" after partition "canary" failed',
    );
    const failed = second.partitions[0]?.gates?.[0];
    expect(failed?.verdict).toBe("Failed");
    // A new revision starts fresh: one measurement, the failing one.
    expect(failed?.measurements?.map((m) => [m.values, m.verdict])).toEqual([
      [[0.2], "MEASUREMENT_VERDICT_FAILED"],
    ]);
    const byName = new Map(second.clusters.map((c) => [c.cluster, c]));
    for (const canary of ["canary-01", "canary-02"])
      expect(byName.get(canary)?.releasedRevision).toBe(second.bundle.revision);
    for (const prod of ["prod-01", "prod-02"]) {
      expect(byName.get(prod)).toMatchObject({
        releasedRevision: rev1,
        held: "HOLD_REASON_GATE_FAILED",
      });
      expect(byName.get(prod)?.message).toContain("failureCondition");
    }

    const text = await e2e.ok("bundle", "get", "web");
    expect(text).toContain("Partition gates:");
    expect(text).toContain("errors (after canary): Failed");
    expect(text).toContain(
      'Halted: gate "errors" after partition "canary" failed',
    );

    // The hub never released the second revision to prod.
    const releases = e2e
      .hub()
      .lines.filter((l) => l.includes('"msg":"Bundle released"'))
      .map((l) => JSON.parse(l) as { cluster: string; revision: string })
      .filter((r) => r.cluster.startsWith("prod-"))
      .map((r) => r.revision);
    expect(releases).toEqual([rev1, rev1]);
  });

  it("refuses a bundle with partition gates on a hub without Prometheus", async () => {
    const plain = await startE2E({});
    try {
      const applied = await plain.cli("bundle", "apply", await bundleDir("1"));
      expect(applied.code).toBe(2);
      expect(applied.stderr).toContain(
        "bundle.rolloutStrategyJson.gates: has metric gates (errors), but this hub has no Prometheus",
      );
    } finally {
      await plain.stop();
    }
  });
});
