/**
 * `flotilla cluster pause|unpause` and how list/get show a paused cluster, against a fake hub on a
 * real gRPC server (docs/cli.md, "Clusters").
 */
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";

function cluster(name: string, paused: boolean): wire.Cluster {
  return {
    name,
    labels: { env: "prod" },
    clusterGroups: [],
    facts: { labels: { env: "prod" }, nodePools: [] },
    connection: "CONNECTION_STATE_CONNECTED",
    agentVersion: "0.1.0",
    registeredAtMs: NOW_MS - 60_000,
    lastSeenAtMs: NOW_MS - 5_000,
    intentGeneration: 2,
    appliedGeneration: 2,
    revision: 9,
    paused,
  };
}

describe("flotilla cluster pause and unpause", () => {
  it.each([
    [
      "pause",
      true,
      "Cluster store-05 paused (revision 9): bundle rollouts give it no new revision and do not count it as unavailable.",
    ],
    [
      "unpause",
      false,
      "Cluster store-05 unpaused (revision 9): bundle rollouts include it again.",
    ],
  ] as const)(
    "%s sends LabelCluster with paused %s and the reason, and says what it means",
    async (verb, paused, said) => {
      await using hub = await startFakeHub({
        unary: {
          LabelCluster: (req) => ({ cluster: cluster(req.name, paused) }),
        },
      });
      const { code, out, err } = await cliAgainst(hub, [
        "cluster",
        verb,
        "store-05",
        "--reason",
        "refit",
      ]);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(hub.requests("LabelCluster")).toEqual([
        {
          name: "store-05",
          setLabels: {},
          removeLabels: [],
          paused,
          expectedRevision: 0,
          reason: "refit",
          _paused: "paused",
        },
      ]);
      expect(out).toBe(`${said}\n`);
    },
  );

  it("needs the cluster's name (exit 2, nothing sent)", async () => {
    await using hub = await startFakeHub({});
    const { code, err } = await cliAgainst(hub, ["cluster", "pause"]);
    expect(code).toBe(2);
    expect(err).toContain("NAME");
    expect(hub.calls).toEqual([]);
  });

  it("shows a paused cluster in list and get", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListClusters: () => ({
          clusters: [cluster("store-04", false), cluster("store-05", true)],
          nextPageToken: "",
        }),
        GetCluster: (req) => ({ cluster: cluster(req.name, true) }),
      },
    });
    const list = await cliAgainst(hub, ["cluster", "list"]);
    expect(list.code).toBe(0);
    const lines = list.out.split("\n");
    expect(lines[1]).toMatch(/^store-04 +Connected +-/);
    expect(lines[2]).toMatch(/^store-05 +Connected \(paused\) +-/);
    const get = await cliAgainst(hub, ["cluster", "get", "store-05"]);
    expect(get.code).toBe(0);
    expect(get.out).toContain(
      "  Paused:         yes: bundle rollouts give it no new revision",
    );
  });
});
