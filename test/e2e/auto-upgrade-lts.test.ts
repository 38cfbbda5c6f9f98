/**
 * Long-term support in live update runs, with real processes (nats-server, the hub, simulated
 * agents, the CLI; docs/semantics.md#upgrades): agents report their cluster's support plan; a
 * TargetKubernetesVersion profile with `longTermSupport` on a minor older than N−2 makes a run that
 * requires long-term support, whose LTS members upgrade while the others fail with
 * NoLongTermSupport and count against the failure budget; with a budget of 0 (an operator's
 * `run create --long-term-support`) the first such member fails the run.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { wire } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fleetFile, startE2E, type E2E } from "./fleet.js";
import { ok, writeJson } from "./recovery-helpers.js";

let e2e: E2E;
let work: string;

/** Two LTS clusters and two without (one says KubernetesOfficial, one reports no plan), on 1.27. */
const FLEET = fleetFile([
  {
    namePrefix: "lts-",
    count: 2,
    labels: { env: "prod" },
    kubernetesVersion: "1.27.9",
    supportPlan: "AKSLongTermSupport",
  },
  {
    name: "std-01",
    labels: { env: "prod" },
    kubernetesVersion: "1.27.9",
    supportPlan: "KubernetesOfficial",
  },
  { name: "std-02", labels: { env: "prod" }, kubernetesVersion: "1.27.9" },
]);

const NO_LTS = (name: string): string =>
  `cluster "${name}" cannot take 1.27.102: it is past standard support and the cluster does not have long-term support enabled`;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-aup-lts-"));
  e2e = await startE2E();
  await e2e.startAgents("fleet", FLEET);
  await e2e.connected(4);
}, 60_000);

afterEach(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
}, 30_000);

/** `flotilla ARGS`, which must succeed. */
function cli(...args: string[]): Promise<string> {
  return ok(e2e, ...args);
}

/** A stored strategy: one stage of every prod cluster, one member at a time, and `budget`. */
async function strategy(name: string, budget?: string): Promise<void> {
  const file = await writeJson(work, `${name}.json`, {
    stages: [
      {
        name: "all",
        memberSelector: { byLabel: "env=prod" },
        maxConcurrency: "1",
        ...(budget === undefined ? {} : { maxAllowedFailures: budget }),
      },
    ],
  });
  await cli("strategy", "create", name, "-f", file);
}

/** N is 1.30; 1.27 is past standard support and 1.27.102 its LTS patch. */
async function releases(): Promise<void> {
  await cli("release", "add", "kubernetes", "1.30.3");
  await cli("release", "add", "kubernetes", "1.27.102", "--lts");
}

async function finished(name: string): Promise<void> {
  await waitFor(
    async () => {
      const run = await e2e.run(name).catch(() => undefined);
      return run !== undefined &&
        (run.state === "Completed" || run.state === "Failed")
        ? true
        : undefined;
    },
    { timeoutMs: 40_000, intervalMs: 250, message: `run ${name} finished` },
  );
}

async function members(name: string): Promise<string[][]> {
  const run = await e2e.run(name);
  return run.stages.flatMap((s) =>
    s.groups.flatMap((g) =>
      g.members.map((m) => [m.name, m.state, m.reason ?? ""]),
    ),
  );
}

/** Each cluster's Kubernetes version as `versions -o json` shows it. */
async function versions(): Promise<Record<string, string>> {
  const out = await cli("versions", "-o", "json");
  const { clusters } = JSON.parse(
    out,
  ) as wire.ListClusterVersionsResponse__Output;
  return Object.fromEntries(
    clusters.map((c) => [c.cluster, c.kubernetesVersion ?? ""]),
  );
}

describe("long-term support in live update runs", () => {
  it(
    "a profile's run on an LTS minor upgrades the LTS members and fails the others (NoLongTermSupport) within its budget",
    { timeout: 120_000 },
    async () => {
      // The agents report their plans; cluster get shows them.
      expect(await cli("cluster", "get", "lts-01")).toContain(
        "  Support plan:   AKSLongTermSupport\n",
      );
      expect(await cli("cluster", "get", "std-02")).toContain(
        "  Support plan:   KubernetesOfficial (none reported)\n",
      );
      const json = JSON.parse(
        await cli("cluster", "get", "std-01", "-o", "json"),
      ) as { cluster: wire.Cluster__Output };
      expect(json.cluster.facts?.supportPlan).toBe("KubernetesOfficial");

      await strategy("tolerant", "2");
      await releases();
      await cli(
        "autoupgradeprofile",
        "create",
        "lts",
        "--channel",
        "TargetKubernetesVersion",
        "--target-kubernetes-version",
        "1.27",
        "--long-term-support",
        "--update-strategy-name",
        "tolerant",
      );
      // The hub makes and starts the run by itself.
      const name = "lts-1-27-102";
      await finished(name);
      const run = await e2e.run(name);
      expect(run.origin).toMatchObject({ profile: "lts", createdBy: "hub" });
      expect(run.payload).toEqual({
        kind: "upgrade",
        upgrade: {
          type: "Full",
          kubernetesVersion: "1.27.102",
          nodeImageSelection: "Latest",
          requiresLongTermSupport: true,
        },
      });
      expect(run).toMatchObject({ state: "Completed", failureCount: 2 });
      expect(await members(name)).toEqual([
        ["lts-01", "Succeeded", ""],
        ["lts-02", "Succeeded", ""],
        ["std-01", "Failed", "NoLongTermSupport"],
        ["std-02", "Failed", "NoLongTermSupport"],
      ]);
      await waitFor(
        async () => {
          const now = await versions();
          return now["lts-01"] === "1.27.102" && now["lts-02"] === "1.27.102"
            ? now
            : undefined;
        },
        { timeoutMs: 20_000, message: "the LTS clusters on 1.27.102" },
      );
      const after = await versions();
      expect([after["std-01"], after["std-02"]]).toEqual(["1.27.9", "1.27.9"]);

      const status = await cli("run", "status", name);
      expect(status).toContain("requires long-term support");
      expect(status).toContain(NO_LTS("std-01"));
      const statusJson = JSON.parse(
        await cli("run", "status", name, "-o", "json"),
      ) as { run: { payload: { upgrade: Record<string, unknown> } } };
      expect(statusJson.run.payload.upgrade["requiresLongTermSupport"]).toBe(
        true,
      );
    },
  );

  it(
    "an operator's run with --long-term-support and a failure budget of 0: the first member without LTS fails the run, the rest never start",
    { timeout: 120_000 },
    async () => {
      await strategy("strict");
      await releases();
      const refused = await e2e.cli(
        "run",
        "create",
        "images",
        "--strategy",
        "strict",
        "--node-image-only",
        "--long-term-support",
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        "--long-term-support: is only allowed for Full and ControlPlaneOnly",
      );

      await cli(
        "run",
        "create",
        "by-hand",
        "--strategy",
        "strict",
        "--kubernetes-version",
        "1.27.102",
        "--long-term-support",
      );
      // Nothing fails at creation: the members' plans are looked at when their turn comes.
      expect((await members("by-hand")).map((m) => m[1])).toEqual([
        "NotStarted",
        "NotStarted",
        "NotStarted",
        "NotStarted",
      ]);
      await cli("run", "start", "by-hand");
      await finished("by-hand");
      const run = await e2e.run("by-hand");
      expect(run.state).toBe("Failed");
      expect(run.message).toContain("Failure budget exceeded");
      expect(await members("by-hand")).toEqual([
        ["lts-01", "Succeeded", ""],
        ["lts-02", "Succeeded", ""],
        ["std-01", "Failed", "NoLongTermSupport"],
        ["std-02", "NotStarted", ""],
      ]);
      const status = await cli("run", "status", "by-hand");
      expect(status).toContain(
        "upgrade to Kubernetes 1.27.102 (control plane and nodes, node images Latest; requires long-term support)",
      );
      expect(status).toContain("NoLongTermSupport");
    },
  );
});
