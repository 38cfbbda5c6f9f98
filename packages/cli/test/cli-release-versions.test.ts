/**
 * `flotilla release add|list|remove` and `flotilla versions` against a fake AdminService: what is
 * sent (kind, family, version, marks, reason), local refusals before any call, the hub's field
 * problems, and the tables and `-o json`.
 */
import { FlotillaError } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";

const k8s = (
  version: string,
  extra: Partial<wire.Release> = {},
): wire.Release => ({
  kind: "RELEASE_KIND_KUBERNETES",
  version,
  family: "",
  lts: false,
  preview: false,
  addedAtMs: NOW_MS - 3_600_000,
  addedBy: "alice",
  ...extra,
});

describe("flotilla release", () => {
  it("publishes a Kubernetes release with its marks and reason", async () => {
    await using hub = await startFakeHub({
      unary: {
        AddRelease: (r) => ({ release: k8s(r.version ?? "", { lts: true }) }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "release",
      "add",
      "kubernetes",
      "1.30.4",
      "--lts",
      "--reason",
      "CVE",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("AddRelease")).toEqual([
      {
        kind: "RELEASE_KIND_KUBERNETES",
        version: "1.30.4",
        family: "",
        lts: true,
        preview: false,
        reason: "CVE",
      },
    ]);
    expect(out).toBe("Published Kubernetes 1.30.4 (LTS).\n");
  });

  it("publishes a node image of a family", async () => {
    await using hub = await startFakeHub({
      unary: {
        AddRelease: (r) => ({
          release: k8s(r.version ?? "", {
            kind: "RELEASE_KIND_NODE_IMAGE",
            family: r.family ?? "",
          }),
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "release",
      "add",
      "node-image",
      "ubuntu-22.04",
      "202603.01.0",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("AddRelease")[0]).toMatchObject({
      kind: "RELEASE_KIND_NODE_IMAGE",
      family: "ubuntu-22.04",
      version: "202603.01.0",
    });
    expect(out).toBe("Published node image ubuntu-22.04 202603.01.0.\n");
  });

  it.each([
    [
      ["release", "add", "os", "1"],
      'KIND must be kubernetes or node-image (got "os")',
    ],
    [["release", "add", "kubernetes", "1.30.4", "1.30.5"], "takes one VERSION"],
    [["release", "add", "node-image", "ubuntu"], "takes FAMILY VERSION"],
    [
      ["release", "remove", "node-image", "a", "b", "c"],
      "takes FAMILY VERSION",
    ],
  ])("refuses %j before calling the hub", async (argv, message) => {
    await using hub = await startFakeHub({ unary: {} });
    const { code, err } = await cliAgainst(hub, argv);
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(hub.calls).toEqual([]);
  });

  it("prints the hub's refusal with the field", async () => {
    await using hub = await startFakeHub({
      unary: {
        AddRelease: () => {
          throw FlotillaError.invalid("release", [
            {
              path: "version",
              message:
                "is older than what every cluster already runs (the oldest runs 1.30.5): Kubernetes does not downgrade",
              value: "1.29.1",
            },
          ]);
        },
      },
    });
    const { code, err } = await cliAgainst(hub, [
      "release",
      "add",
      "kubernetes",
      "1.29.1",
    ]);
    expect(code).toBe(2); // invalid input, as for local refusals
    expect(err).toContain("version");
    expect(err).toContain("is older than what every cluster already runs");
  });

  it("lists releases as a table and as JSON, and removes one", async () => {
    const releases = [
      k8s("1.30.4", { preview: true }),
      k8s("202603.01.0", {
        kind: "RELEASE_KIND_NODE_IMAGE",
        family: "ubuntu-22.04",
      }),
    ];
    await using hub = await startFakeHub({
      unary: {
        ListReleases: () => ({ releases }),
        RemoveRelease: () => ({ release: releases[0] }),
      },
    });
    const table = await cliAgainst(hub, ["release", "list"]);
    expect(table.code).toBe(0);
    expect(table.out.split("\n").map((l) => l.trimEnd())).toEqual([
      "KIND        FAMILY        VERSION      MARKS    BY     AGE",
      "kubernetes  -             1.30.4       preview  alice  1h",
      "node-image  ubuntu-22.04  202603.01.0  -        alice  1h",
      "",
    ]);
    const json = await cliAgainst(hub, ["release", "list", "-o", "json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      releases: [
        { version: "1.30.4", preview: true },
        { family: "ubuntu-22.04" },
      ],
    });
    const removed = await cliAgainst(hub, [
      "release",
      "remove",
      "kubernetes",
      "1.30.4",
    ]);
    expect(removed.out).toBe("Removed Kubernetes 1.30.4 (preview).\n");
    expect(hub.requests("RemoveRelease")).toEqual([
      {
        kind: "RELEASE_KIND_KUBERNETES",
        version: "1.30.4",
        family: "",
        reason: "",
      },
    ]);
  });
});

describe("flotilla versions", () => {
  const answer: wire.ListClusterVersionsResponse = {
    clusters: [
      {
        cluster: "prod-1",
        kubernetesVersion: "1.30.5",
        upgrades: [
          { version: "1.31.2", lts: true, preview: false },
          { version: "1.30.7", lts: false, preview: false },
        ],
        nodePools: [
          {
            pool: "system",
            imageFamily: "ubuntu-22.04",
            imageVersion: "202601.01.0",
            newestImageVersion: "202603.01.0",
          },
          {
            pool: "gpu",
            imageFamily: "ubuntu-gpu",
            imageVersion: "202601.01.0",
          },
        ],
        reportsCatalogue: true,
      },
      {
        cluster: "edge-1",
        upgrades: [],
        nodePools: [],
        reportsCatalogue: false,
      },
    ],
  };

  it("shows the control planes' upgrades and each pool's newest image", async () => {
    await using hub = await startFakeHub({
      unary: { ListClusterVersions: () => answer },
    });
    const { code, out } = await cliAgainst(hub, ["versions"]);
    expect(code).toBe(0);
    expect(out.split("\n").map((l) => l.trimEnd())).toEqual([
      "CLUSTER  KUBERNETES  UPGRADES              SOURCE",
      "prod-1   1.30.5      1.31.2 (LTS), 1.30.7  agent + releases",
      "edge-1   unknown     none                  releases",
      "",
      "CLUSTER  NODE POOL  IMAGE FAMILY  IMAGE        NEWEST",
      "prod-1   system     ubuntu-22.04  202601.01.0  202603.01.0",
      "prod-1   gpu        ubuntu-gpu    202601.01.0  up to date",
      "",
    ]);
  });

  it("asks for one cluster and prints JSON", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListClusterVersions: () => ({ clusters: answer.clusters?.slice(0, 1) }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "versions",
      "--cluster",
      "prod-1",
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    expect(hub.requests("ListClusterVersions")).toEqual([
      { cluster: "prod-1" },
    ]);
    expect(JSON.parse(out).clusters[0].upgrades[0]).toEqual({
      version: "1.31.2",
      lts: true,
      preview: false,
    });
  });
});
