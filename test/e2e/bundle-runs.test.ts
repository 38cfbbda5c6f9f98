/**
 * A staged run of a bundle revision end to end (docs/semantics.md#staged-bundle-runs): nats-server,
 * the hub, simulated agents and the built CLI. Revision 1 of bundle `web` rolls out through its
 * partitions; revision 2 is applied to the paused bundle and rolled out by `run create --bundle`
 * through three stages, the last behind an approval gate approved with the CLI. One cluster never
 * becomes Ready: its member times out within the failure budget, naming what its agent last
 * reported. The run completes, every other member is Ready at revision 2, and the bundle is back on
 * its partition rollout, which brings revision 2 to the cluster the strategy left unassigned.
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
  work = await mkdtemp(join(tmpdir(), "flotilla-bundle-runs-"));
  e2e = await startE2E({ hubLogLevel: "info" });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 1, { ring: "canary" }),
      clusters("wave-", 2, { ring: "wave" }),
      clusters(
        "stuck-",
        1,
        { ring: "wave" },
        { failures: { neverReady: ["web"] } },
      ),
      clusters("final-", 2, { ring: "final" }),
      clusters("stray-", 1, { ring: "none" }),
    ]),
  );
  await e2e.connected(7);
});

afterEach(() =>
  Promise.all([e2e.stop(), rm(work, { recursive: true, force: true })]),
);

interface ClusterView {
  readonly cluster: string;
  readonly state: string;
  readonly releasedRevision?: string;
  readonly appliedRevision?: string;
  readonly runStage?: string;
  readonly message: string;
}

interface BundleView {
  readonly bundle: { readonly revision: string };
  readonly clusters: ClusterView[];
  readonly updateRun?: string;
  readonly updateRunRevision?: string;
}

async function bundleGet(): Promise<BundleView> {
  return JSON.parse(
    await e2e.ok("bundle", "get", "web", "-o", "json"),
  ) as BundleView;
}

const READY = "BUNDLE_CLUSTER_STATE_READY";

/** Every cluster but stuck-01 Ready at `revision`. */
async function readyAt(
  revision: string,
  names: readonly string[],
): Promise<boolean> {
  const view = await bundleGet();
  return names.every((n) =>
    view.clusters.some(
      (c) =>
        c.cluster === n && c.state === READY && c.appliedRevision === revision,
    ),
  );
}

const HEALTHY = [
  "canary-01",
  "wave-01",
  "wave-02",
  "final-01",
  "final-02",
  "stray-01",
];

describe("a staged run of a bundle revision", () => {
  it("rolls revision 2 through three stages with an approval gate and a failure within budget, then hands the bundle back to its partitions", async () => {
    const dir = join(work, "web");
    await mkdir(dir);
    await writeFile(
      join(dir, "fleet.yaml"),
      "defaultNamespace: web\ntargets:\n  - clusterSelector: {}\n",
    );
    const manifest = (version: string) =>
      writeFile(
        join(dir, "config.yaml"),
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: "${version}"\n`,
      );
    await manifest("1");
    await e2e.ok("bundle", "apply", dir);
    const r1 = (await bundleGet()).bundle.revision;
    await waitFor(() => readyAt(r1, HEALTHY), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 1 Ready everywhere but stuck-01",
    });

    // Revision 2 is applied paused (fleet.yaml `paused: true`): released nowhere.
    await writeFile(
      join(dir, "fleet.yaml"),
      "defaultNamespace: web\npaused: true\ntargets:\n  - clusterSelector: {}\n",
    );
    await manifest("2");
    await e2e.ok("bundle", "apply", dir);
    const r2 = (await bundleGet()).bundle.revision;
    expect(r2).not.toBe(r1);
    expect(
      (await bundleGet()).clusters.filter((c) => c.releasedRevision === r2),
    ).toEqual([]);

    const strategy = join(work, "rings.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [
          { name: "canary", memberSelector: { byLabel: "ring=canary" } },
          {
            name: "wave",
            memberSelector: { byLabel: "ring=wave" },
            maxConcurrency: 3,
            maxAllowedFailures: 1,
          },
          {
            name: "final",
            memberSelector: { byLabel: "ring=final" },
            maxConcurrency: 2,
            beforeGates: [{ type: "Approval", displayName: "final ring" }],
          },
        ],
      }),
    );
    const created = await e2e.ok(
      "run",
      "create",
      "roll",
      "-f",
      strategy,
      "--bundle",
      "web",
      "--progress-deadline",
      "8s",
    );
    expect(created).toContain(`bundle web revision ${r2.slice(0, 12)}`);
    // Resumed, the bundle is still driven by the run: its partitions release nothing of r2.
    await e2e.ok("bundle", "resume", "web");
    const driven = await bundleGet();
    expect(driven.updateRun).toBe("roll");
    expect(driven.updateRunRevision).toBe(r2);
    expect(await e2e.ok("bundle", "get", "web")).toContain(
      `driven by staged run roll, revision ${r2.slice(0, 12)}`,
    );
    // A second run of the same bundle is refused, naming the first.
    const second = await e2e.cli(
      "run",
      "create",
      "again",
      "-f",
      strategy,
      "--bundle",
      "web",
    );
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain('update run "roll"');

    await e2e.ok("run", "start", "roll");
    const gate = await waitFor(
      async () =>
        (await e2e.run("roll")).stages[2]?.beforeGates.find(
          (g) => g.state === "Pending",
        ),
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        message: "the final ring's gate to be Pending",
      },
    );
    const beforeApproval = await e2e.run("roll");
    const stuck = beforeApproval.stages[1]?.groups[0]?.members.find(
      (m) => m.name === "stuck-01",
    );
    expect(stuck).toMatchObject({ state: "Failed", reason: "TimedOut" });
    expect(stuck?.message).toContain("last reported: NotReady:");
    const view = await bundleGet();
    // The final ring waits at the gate, still at revision 1; the unassigned cluster too.
    for (const name of ["final-01", "final-02", "stray-01"])
      expect(
        view.clusters.find((c) => c.cluster === name)?.releasedRevision,
      ).toBe(r1);
    expect(view.clusters.find((c) => c.cluster === "wave-01")).toMatchObject({
      runStage: "wave",
      releasedRevision: r2,
    });
    const status = await e2e.ok("run", "status", "roll", "--members");
    expect(status).toContain(`bundle web revision ${r2.slice(0, 12)}`);
    expect(status).toMatch(/stuck-01.*TimedOut/);

    await e2e.ok("run", "approve", "roll", gate.id, "--reason", "wave healthy");
    const watch = await e2e.cli("run", "status", "roll", "--watch");
    expect(watch.code, watch.stderr).toBe(0);
    const run = await e2e.run("roll");
    expect(run.state).toBe("Completed");
    const members = run.stages.flatMap((s) =>
      s.groups.flatMap((g) => g.members),
    );
    expect(
      members
        .filter((m) => m.state === "Succeeded")
        .map((m) => m.name)
        .sort(),
    ).toEqual(["canary-01", "final-01", "final-02", "wave-01", "wave-02"]);

    // Back on partitions at the current revision: the unassigned cluster gets r2 through them.
    await waitFor(() => readyAt(r2, HEALTHY), {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: "revision 2 Ready everywhere but stuck-01",
    });
    const after = await bundleGet();
    expect(after.updateRun).toBeUndefined();
    expect(
      after.clusters.find((c) => c.cluster === "stuck-01")?.releasedRevision,
    ).toBe(r2);
    expect(await e2e.ok("bundle", "get", "web")).toContain("partitioned");
  }, 120_000);
});
