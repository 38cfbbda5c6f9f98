/**
 * `flotilla cluster …` against a fake hub on a real gRPC server: the requests the CLI sends
 * (actor header and reason included), the tables and details it prints, and `-o json`.
 */
import { FlotillaError } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";

const MINUTE = 60_000;

function cluster(
  name: string,
  overrides: Partial<wire.Cluster> = {},
): wire.Cluster {
  return {
    name,
    labels: { env: name.split("-")[0] ?? "", region: "eu" },
    clusterGroups: ["all"],
    facts: {
      labels: { env: "prod" },
      kubernetesVersion: "1.30.4",
      region: "eu",
      nodePools: [
        {
          name: "system",
          imageFamily: "ubuntu-22.04",
          imageVersion: "2026.01.1",
        },
        {
          name: "win",
          imageFamily: "windows-2022",
          imageVersion: "2026.01.1",
          kubernetesVersion: "1.30.3",
        },
      ],
      maintenance: {
        kubernetes: [
          {
            recurring: {
              schedule: {
                weekly: { intervalWeeks: 1, dayOfWeek: "DAY_OF_WEEK_SATURDAY" },
              },
              startTime: "22:00",
              utcOffset: "+02:00",
              durationHours: 6,
            },
          },
        ],
        nodeImage: [],
        workloads: [],
        freezes: [],
      },
    },
    connection: "CONNECTION_STATE_CONNECTED",
    agentVersion: "0.1.0",
    registeredAtMs: NOW_MS - 3 * 24 * 60 * MINUTE,
    lastSeenAtMs: NOW_MS - 5_000,
    intentGeneration: 4,
    appliedGeneration: 4,
    revision: 7,
    ...overrides,
  };
}

describe("flotilla cluster list", () => {
  it("sends the selector with the actor header and prints one row per cluster", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListClusters: () => ({
          clusters: [
            cluster("prod-eu-1"),
            cluster("prod-eu-2", {
              connection: "CONNECTION_STATE_UNREACHABLE",
              lastSeenAtMs: NOW_MS - 12 * MINUTE,
              intentGeneration: 5,
            }),
          ],
          nextPageToken: "",
        }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "cluster",
      "list",
      "-l",
      "env=prod",
      "--actor",
      "alice",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.calls).toEqual([
      {
        method: "ListClusters",
        request: expect.objectContaining({
          labelSelector: "env=prod",
        }) as unknown,
        actor: "alice",
      },
    ]);
    const lines = out.split("\n");
    expect(lines[0]).toMatch(
      /^NAME +CONNECTION +KUBERNETES +APPLIED\/INTENT +LAST SEEN +LABELS$/,
    );
    expect(lines[1]).toMatch(
      /^prod-eu-1 +Connected +1\.30\.4 +4\/4 +5s ago +env=prod,region=eu$/,
    );
    expect(lines[2]).toMatch(
      /^prod-eu-2 +Unreachable +1\.30\.4 +4\/5\* +12m ago +env=prod,region=eu$/,
    );
    expect(out).toContain(
      "* the agent has not yet reported the latest intent applied",
    );
  });

  it("follows page tokens to the end", async () => {
    const pages: Record<string, wire.ListClustersResponse> = {
      "": { clusters: [cluster("a-1")], nextPageToken: "p2" },
      p2: { clusters: [cluster("a-2")], nextPageToken: "" },
    };
    await using hub = await startFakeHub({
      unary: { ListClusters: (req) => pages[req.pageToken] ?? {} },
    });
    const { code, out } = await cliAgainst(hub, [
      "cluster",
      "list",
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    const parsed = JSON.parse(out) as { clusters: { name: string }[] };
    expect(parsed.clusters.map((c) => c.name)).toEqual(["a-1", "a-2"]);
    expect(
      hub
        .requests<{ pageToken: string }>("ListClusters")
        .map((r) => r.pageToken),
    ).toEqual(["", "p2"]);
  });

  it("refuses a malformed selector before calling the hub, exit 2", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "cluster",
      "list",
      "-l",
      "env in (a",
    ]);
    expect(code).toBe(2);
    expect(err).toMatch(/^flotilla: cluster list: selector "env in \(a": /);
    expect(hub.calls).toEqual([]);
  });
});

describe("flotilla cluster get", () => {
  it("shows facts, node pools and the maintenance windows per scope", async () => {
    await using hub = await startFakeHub({
      unary: { GetCluster: (req) => ({ cluster: cluster(req.name) }) },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "cluster",
      "get",
      "prod-eu-1",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain("Cluster prod-eu-1\n");
    expect(out).toContain(
      "  Connection:     Connected (agent 0.1.0) · last seen 5s ago\n",
    );
    expect(out).toContain("  Kubernetes:     1.30.4\n");
    expect(out).toMatch(/\n {2}win +windows-2022 +2026\.01\.1 +1\.30\.3\n/);
    expect(out).toMatch(/\n {2}kubernetes: +\S.*Saturday.*22:00/);
    expect(out).toContain("  nodeImage:      any time\n");
    expect(out).toContain(
      "  Support plan:   KubernetesOfficial (none reported)\n",
    );
  });

  it("shows the support plan the agent reports, in the table and in -o json", async () => {
    const lts = (name: string): wire.Cluster => {
      const c = cluster(name);
      return { ...c, facts: { ...c.facts, supportPlan: "AKSLongTermSupport" } };
    };
    await using hub = await startFakeHub({
      unary: { GetCluster: (req) => ({ cluster: lts(req.name) }) },
    });
    const text = await cliAgainst(hub, ["cluster", "get", "lts-1"]);
    expect(text.out).toContain("  Support plan:   AKSLongTermSupport\n");
    const json = await cliAgainst(hub, [
      "cluster",
      "get",
      "lts-1",
      "-o",
      "json",
    ]);
    expect(
      (JSON.parse(json.out) as { cluster: wire.Cluster }).cluster.facts
        ?.supportPlan,
    ).toBe("AKSLongTermSupport");
  });

  it("prints NOT_FOUND's message and exits 1", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetCluster: (req) => {
          throw new FlotillaError(
            "not_found",
            `Cluster "${req.name}" not found`,
          );
        },
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "cluster",
      "get",
      "nope",
    ]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toBe('flotilla: Cluster "nope" not found\n');
  });
});

describe("flotilla cluster label and remove", () => {
  it("sends labels to set and remove, the update group and the reason", async () => {
    await using hub = await startFakeHub({
      unary: {
        LabelCluster: (req) => ({
          cluster: cluster(req.name, {
            labels: { env: "prod", tier: "gold" },
            updateGroup: req.updateGroup ?? "",
            revision: 8,
          }),
        }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "cluster",
      "label",
      "prod-eu-1",
      "tier=gold",
      "region-",
      "--update-group",
      "prod-eu",
      "--reason",
      "move to gold tier",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("LabelCluster")).toEqual([
      {
        name: "prod-eu-1",
        setLabels: { tier: "gold" },
        removeLabels: ["region"],
        updateGroup: "prod-eu",
        expectedRevision: 0,
        reason: "move to gold tier",
        _updateGroup: "updateGroup",
      },
    ]);
    expect(out).toContain("Cluster prod-eu-1 updated (revision 8).");
    expect(out).toContain("Labels:        env=prod,tier=gold");
  });

  it("refuses bad label words locally, naming each, exit 2", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, [
      "cluster",
      "label",
      "c-1",
      "bad key=x",
      "novalue",
    ]);
    expect(code).toBe(2);
    expect(err).toContain('label key "bad key" must be');
    expect(err).toContain('"novalue": expected key=value or key- (to remove)');
    expect(hub.calls).toEqual([]);
  });

  it("removes a cluster with the reason", async () => {
    await using hub = await startFakeHub({
      unary: { RemoveCluster: () => ({}) },
    });
    const { code, out } = await cliAgainst(hub, [
      "cluster",
      "remove",
      "old-1",
      "--reason",
      "decommissioned",
    ]);
    expect(code).toBe(0);
    expect(out).toBe("Cluster old-1 removed.\n");
    expect(hub.requests("RemoveCluster")).toEqual([
      { name: "old-1", reason: "decommissioned" },
    ]);
  });
});
