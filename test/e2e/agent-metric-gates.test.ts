/**
 * A metric gate measured on what the agents themselves report (docs/agent.md#simulated-error-ratio,
 * docs/engine.md#metric-gates): a real Prometheus scrapes the simulated agents' own `/metrics`,
 * where each cluster shows the error ratio of the bundle revision it holds. Bundle `web` is staged
 * (`bundle apply --update-strategy`), so each revision is a run the hub makes: canary, a gate on
 * the canary's error ratio, then prod. Revision 1 sets no ratio: the gate passes and prod gets it.
 * Revision 2 makes 20% of requests fail: once the canary holds it, its agent reports the errors,
 * the gate fails, the run ends Failed, and prod keeps revision 1.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  freePort,
  startPrometheus,
  waitFor,
  type PrometheusServer,
} from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let prometheus: PrometheusServer;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-agent-metric-gates-"));
  const metricsPort = await freePort();
  prometheus = await startPrometheus({
    targets: [`127.0.0.1:${String(metricsPort)}`],
    scrapeIntervalMs: 500,
  });
  e2e = await startE2E({
    hubArgs: ["--prometheus-url", prometheus.url, "--prometheus-timeout", "5s"],
  });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 2, { ring: "canary" }),
      clusters("prod-", 3, { ring: "prod" }),
    ]),
    ["--metrics-listen", `127.0.0.1:${String(metricsPort)}`],
  );
  await e2e.connected(5);
});

afterEach(() =>
  Promise.all([
    e2e.stop(),
    prometheus.close(),
    rm(work, { recursive: true, force: true }),
  ]),
);

interface BundleView {
  readonly bundle: { readonly revision: string };
  readonly clusters: {
    readonly cluster: string;
    readonly state: string;
    readonly appliedRevision?: string;
  }[];
}

async function bundleGet(): Promise<BundleView> {
  return JSON.parse(
    await e2e.ok("bundle", "get", "web", "-o", "json"),
  ) as BundleView;
}

/** The clusters whose agents report `revision` applied, by name. */
function holding(view: BundleView, revision: string): string[] {
  return view.clusters
    .filter((c) => c.appliedRevision === revision)
    .map((c) => c.cluster)
    .sort();
}

/**
 * The run the hub made for `revision` (named `web-<first 8 digits>`:
 * docs/semantics.md#staged-bundles), once it has ended.
 */
async function endedRun(revision: string) {
  const name = `web-${revision.slice(0, 8)}`;
  return waitFor(
    async () => {
      // Not found until the hub has made it: waitFor tries again.
      const run = await e2e.run(name);
      return run.state === "Completed" || run.state === "Failed"
        ? run
        : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 250, message: `run ${name} to end` },
  );
}

const GATE = "stage:canary:after";

describe("a metric gate on the error ratio the agents report", () => {
  it("passes a healthy revision and fails the run of one whose canaries report errors", async () => {
    await writeFile(
      join(work, "rings.json"),
      JSON.stringify({
        stages: [
          {
            name: "canary",
            memberSelector: { byLabel: "ring=canary" },
            afterGates: [
              {
                type: "Metric",
                displayName: "canary error ratio",
                // No series (a revision that sets no ratio) is no errors.
                query:
                  'max(flotilla_simulated_bundle_error_ratio{bundle="web",cluster=~"{{clusters}}"}) or vector(0)',
                successCondition: "result[0] < 0.05",
                failureCondition: "result[0] >= 0.05",
                interval: "1s",
                count: 3,
              },
            ],
          },
          { name: "prod", memberSelector: { byLabel: "ring=prod" } },
        ],
      }),
    );
    await e2e.ok("strategy", "create", "rings", "-f", join(work, "rings.json"));

    const dir = join(work, "web");
    await mkdir(dir);
    await writeFile(
      join(dir, "fleet.yaml"),
      "defaultNamespace: web\ntargets:\n  - clusterSelector: {}\n",
    );
    const deployment = (version: string, errorRatio?: string) =>
      writeFile(
        join(dir, "deployment.yaml"),
        [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          "  name: web",
          ...(errorRatio === undefined
            ? []
            : [
                "  annotations:",
                `    simulated.flotilla.dev/error-ratio: "${errorRatio}"`,
              ]),
          "spec:",
          "  replicas: 2",
          "  template:",
          `    metadata: { labels: { app: web, version: "${version}" } }`,
          "",
        ].join("\n"),
      );

    await deployment("1");
    await e2e.ok("bundle", "apply", dir, "--update-strategy", "rings");
    const r1 = (await bundleGet()).bundle.revision;
    const healthy = await endedRun(r1);
    expect(healthy.state).toBe("Completed");
    expect(healthy.stages[0]?.afterGates[0]).toMatchObject({
      state: "Completed",
      completedBy: "metric",
    });
    expect(
      healthy.stages[0]?.afterGates[0]?.metric?.measurements.map(
        (m) => m.verdict,
      ),
    ).toEqual(["Successful", "Successful", "Successful"]);
    const all = ["canary-01", "canary-02", "prod-01", "prod-02", "prod-03"];
    expect(holding(await bundleGet(), r1)).toEqual(all);

    // Revision 2 makes 20% of requests fail wherever it runs.
    await deployment("2", "0.2");
    await e2e.ok("bundle", "apply", dir, "--update-strategy", "rings");
    const r2 = (await bundleGet()).bundle.revision;
    expect(r2).not.toBe(r1);
    const failed = await endedRun(r2);
    expect(failed.state).toBe("Failed");
    expect(failed.message).toContain(`Metric gate ${GATE} failed`);
    const gate = failed.stages[0]?.afterGates[0];
    expect(gate?.state).toBe("Failed");
    expect(gate?.metric?.lastQuery).toBe(
      'max(flotilla_simulated_bundle_error_ratio{bundle="web",cluster=~"canary-01|canary-02"}) or vector(0)',
    );
    expect(gate?.metric?.measurements.at(-1)).toMatchObject({
      values: [0.2],
      verdict: "Failed",
    });
    // The canaries hold the bad revision; prod never got it.
    const view = await bundleGet();
    expect(holding(view, r2)).toEqual(["canary-01", "canary-02"]);
    expect(holding(view, r1)).toEqual(["prod-01", "prod-02", "prod-03"]);
  }, 180_000);
});
