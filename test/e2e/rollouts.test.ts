/**
 * Rollouts end to end with real processes: nats-server, the hub, 20 simulated agents in their own
 * process, and the flotilla CLI as the operator.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@flotilla/testkit";
import {
  clusters,
  fleetFile,
  maxOverlap,
  memberIntervals,
  startE2E,
  type E2E,
} from "./fleet.js";

let e2e: E2E;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-rollouts-"));
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 2, { env: "canary", geo: "eu" }),
      clusters("prod-eu-", 9, { env: "prod", geo: "eu" }),
      clusters("prod-us-", 9, { env: "prod", geo: "us" }),
    ]),
  );
  await e2e.connected(20);
});

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

describe("rollouts across 20 agents", () => {
  it("runs a staged upgrade in order, within its limits, through an approval gate", async () => {
    const strategy = join(work, "strategy.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [
          {
            name: "canary",
            memberSelector: { byLabel: "env=canary" },
            maxConcurrency: 1,
            afterGates: [{ type: "Approval", displayName: "canary ok" }],
          },
          {
            name: "prod",
            maxConcurrency: 5,
            groups: [
              {
                name: "eu",
                memberSelector: { byLabel: "env=prod,geo=eu" },
                maxConcurrency: 3,
              },
              {
                name: "us",
                memberSelector: { byLabel: "env=prod,geo=us" },
                maxConcurrency: 3,
              },
            ],
          },
        ],
      }),
    );
    await e2e.ok("strategy", "create", "rings", "-f", strategy);
    await e2e.ok(
      "run",
      "create",
      "up",
      "--strategy",
      "rings",
      "--kubernetes-version",
      "1.30.3",
    );
    await e2e.ok("run", "start", "up", "--reason", "e2e");

    // The gate waits for an operator; the status tree says so.
    const gate = await waitFor(
      async () =>
        (await e2e.run("up")).stages[0]?.afterGates.find(
          (g) => g.state === "Pending",
        ),
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: "the canary gate to be Pending",
      },
    );
    const status = await e2e.ok("run", "status", "up");
    expect(status).toContain(gate.id);
    expect(status).toMatch(/Pending/);
    const beforeApproval = await e2e.run("up");
    expect(
      beforeApproval.stages[1]?.groups
        .flatMap((g) => g.members)
        .every((m) => m.state === "NotStarted"),
    ).toBe(true);
    await e2e.ok(
      "run",
      "approve",
      "up",
      gate.id,
      "--reason",
      "canaries healthy",
    );

    const watch = await e2e.cli("run", "status", "up", "--watch");
    expect(watch.code, watch.stderr).toBe(0);
    const run = await e2e.run("up");
    expect(run.state).toBe("Completed");
    const intervals = memberIntervals(run);
    expect(intervals).toHaveLength(20);
    expect(intervals.every((m) => m.state === "Succeeded")).toBe(true);

    const canary = intervals.filter((m) => m.stage === "canary");
    const prod = intervals.filter((m) => m.stage === "prod");
    const approvedAt =
      run.stages[0]?.afterGates[0]?.completedAtMs ?? Number.NaN;
    expect(Math.max(...canary.map((m) => m.end))).toBeLessThanOrEqual(
      approvedAt,
    );
    expect(Math.min(...prod.map((m) => m.start))).toBeGreaterThanOrEqual(
      approvedAt,
    );
    expect(maxOverlap(canary)).toBe(1);
    expect(maxOverlap(prod)).toBeLessThanOrEqual(5);
    expect(
      maxOverlap(prod.filter((m) => m.group === "eu")),
    ).toBeLessThanOrEqual(3);
    expect(
      maxOverlap(prod.filter((m) => m.group === "us")),
    ).toBeLessThanOrEqual(3);
    // Concurrency was used, not just respected.
    expect(maxOverlap(prod)).toBeGreaterThan(1);

    // Every state change was audited with its caller and reason.
    const audit = JSON.parse(
      await e2e.ok("audit", "list", "--method", "ApproveGate", "-o", "json"),
    ) as {
      events: { actor: string; reason: string }[];
    };
    expect(audit.events.map((e) => [e.actor, e.reason])).toEqual([
      ["e2e", "canaries healthy"],
    ]);
  });

  it("rolls a bundle out by partitions until every target is Ready", async () => {
    const dir = join(work, "bundle");
    await import("node:fs/promises").then((fs) => fs.mkdir(dir));
    await writeFile(
      join(dir, "fleet.yaml"),
      [
        "namespace: web",
        "targets:",
        "  - clusterSelector: { matchLabels: { geo: eu } }",
        "  - clusterSelector: { matchLabels: { geo: us } }",
        "rolloutStrategy:",
        "  maxUnavailable: 20%",
        "  partitions:",
        "    - name: canary",
        "      clusterSelector: { matchLabels: { env: canary } }",
        "    - name: prod",
        "      clusterSelector: { matchLabels: { env: prod } }",
        "      maxUnavailable: 10%",
        "",
      ].join("\n"),
    );
    await writeFile(
      join(dir, "config.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: hello\n",
    );
    await e2e.ok("bundle", "apply", dir, "--name", "web");
    await waitFor(
      async () => {
        const got = JSON.parse(
          await e2e.ok("bundle", "get", "web", "-o", "json"),
        ) as {
          bundle: { counts: { targets: number; ready: number } };
        };
        return (
          got.bundle.counts.targets === 20 && got.bundle.counts.ready === 20
        );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 300,
        message: "the bundle to be Ready on 20 clusters",
      },
    );
    const got = JSON.parse(
      await e2e.ok("bundle", "get", "web", "-o", "json"),
    ) as {
      clusters: {
        cluster: string;
        state: string;
        partition: string;
        appliedRevision: string;
      }[];
      partitions: { name: string; clusterCount: number }[];
    };
    expect(got.clusters).toHaveLength(20);
    expect(new Set(got.clusters.map((c) => c.state))).toEqual(
      new Set(["BUNDLE_CLUSTER_STATE_READY"]),
    );
    expect(got.partitions.map((p) => [p.name, p.clusterCount])).toEqual([
      ["canary", 2],
      ["prod", 18],
    ]);
    // A second revision rolls out as an update, to Ready again.
    await writeFile(
      join(dir, "config.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: hello again\n",
    );
    const applied = await e2e.ok(
      "bundle",
      "apply",
      dir,
      "--name",
      "web",
      "-o",
      "json",
    );
    const revision = (JSON.parse(applied) as { bundle: { revision: string } })
      .bundle.revision;
    await waitFor(
      async () => {
        const now = JSON.parse(
          await e2e.ok("bundle", "get", "web", "-o", "json"),
        ) as {
          clusters: { state: string; appliedRevision?: string }[];
        };
        return now.clusters.every(
          (c) =>
            c.state === "BUNDLE_CLUSTER_STATE_READY" &&
            c.appliedRevision === revision,
        );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 300,
        message: "the new revision to be Ready everywhere",
      },
    );
  });
});
