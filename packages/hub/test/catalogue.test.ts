/**
 * The hub's version catalogue (docs/engine.md#the-version-catalogue): cluster catalogues restricted
 * to their cluster, operator releases for every cluster, release validation, and update runs that
 * are created with it and see its changes.
 */
import { FlotillaError, type Cluster, type ClusterGroup } from "@flotilla/core";
import type { ClusterFacts } from "@flotilla/protocol";
import pino from "pino";
import { waitFor } from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import { createHubCatalogue } from "../src/catalogue/hub-catalogue.js";
import {
  createReleases,
  validateRelease,
  type Release,
} from "../src/catalogue/releases.js";
import { createIntentWriter } from "../src/intents/intent-writer.js";
import { createMemoryIntentPublisher } from "../src/intents/memory-intent-publisher.js";
import { createRunManager } from "../src/runs/run-manager.js";
import { runAvailable } from "../src/runs/run-available.js";
import { createMemoryStore } from "../src/store/memory-store.js";

const UBUNTU = "ubuntu-22.04";
const NOW = Date.parse("2026-12-01T10:00:00Z");

/** A fleet whose facts tests change; `emit` tells the listeners as the registry would. */
function fleet(facts: Record<string, ClusterFacts>) {
  const listeners = new Set<
    (change: { type: string; cluster: string }) => void
  >();
  const asCluster = (name: string, f: ClusterFacts): Cluster => ({
    name,
    labels: f.labels,
    groups: [],
    nodePools: f.nodePools,
    ...(f.kubernetesVersion === undefined
      ? {}
      : { kubernetesVersion: f.kubernetesVersion }),
  });
  return {
    facts,
    clusters: () =>
      Object.entries(facts)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, f]) => asCluster(name, f)),
    cluster: (name: string) =>
      facts[name] === undefined ? undefined : asCluster(name, facts[name]),
    groups: (): readonly ClusterGroup[] => [],
    isUnreachable: () => false,
    factsOf: (name: string) => facts[name],
    onChange(listener: (change: { type: string; cluster: string }) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(name: string, f: ClusterFacts) {
      facts[name] = f;
      for (const listener of listeners)
        listener({ type: "changed", cluster: name });
    },
  };
}

function facts(
  imageVersion: string,
  catalogue?: ClusterFacts["catalogue"],
): ClusterFacts {
  return {
    labels: { env: "prod" },
    kubernetesVersion: "1.30.5",
    nodePools: [{ name: "system", imageFamily: UBUNTU, imageVersion }],
    ...(catalogue === undefined ? {} : { catalogue }),
  };
}

const release = (r: Partial<Release> & Pick<Release, "kind" | "version">) =>
  ({ addedAtMs: NOW, addedBy: "alice", ...r }) as Release;

async function setup(initial: Record<string, ClusterFacts>) {
  const store = createMemoryStore();
  await store.start();
  const releases = createReleases({ store });
  await releases.start();
  const f = fleet(initial);
  const catalogue = createHubCatalogue({ fleet: f, releases });
  let changes = 0;
  catalogue.onChange(() => {
    changes += 1;
  });
  return { store, releases, fleet: f, catalogue, changes: () => changes };
}

describe("the hub's catalogue", () => {
  it("restricts each cluster's own offers to it, and lifts the restriction when all clusters have them", async () => {
    const { catalogue } = await setup({
      a: facts("202601.01.0", {
        kubernetes: [
          { version: "1.31.2" },
          { version: "1.32.0", preview: true },
        ],
        nodePools: [
          { pool: "system", imageVersions: ["202602.01.0", "202603.01.0"] },
        ],
      }),
      b: facts("202601.01.0", {
        kubernetes: [{ version: "1.31.2" }],
        nodePools: [{ pool: "system", imageVersions: ["202602.01.0"] }],
      }),
      c: facts("202601.01.0"),
    });
    expect(catalogue.available(["a", "b"])).toEqual({
      kubernetes: [
        { version: "1.31.2" },
        { version: "1.32.0", preview: true, clusters: ["a"] },
      ],
      nodeImages: [
        { family: UBUNTU, version: "202602.01.0" },
        { family: UBUNTU, version: "202603.01.0", clusters: ["a"] },
      ],
    });
    // c reports no catalogue: nothing of a's and b's is offered to it.
    expect(catalogue.available().nodeImages).toEqual([
      { family: UBUNTU, version: "202602.01.0", clusters: ["a", "b"] },
      { family: UBUNTU, version: "202603.01.0", clusters: ["a"] },
    ]);
  });

  it("offers operator releases to every cluster and says when anything offered changed", async () => {
    const {
      catalogue,
      releases,
      fleet: f,
      changes,
    } = await setup({
      a: facts("202601.01.0"),
    });
    await releases.add(
      release({ kind: "kubernetes", version: "1.31.2", lts: true }),
    );
    await releases.add(
      release({ kind: "node-image", family: UBUNTU, version: "202604.01.0" }),
    );
    expect(catalogue.available(["a", "z"])).toEqual({
      kubernetes: [{ version: "1.31.2", lts: true }],
      nodeImages: [{ family: UBUNTU, version: "202604.01.0" }],
    });
    expect(changes()).toBe(2);
    f.set("a", { ...facts("202601.01.0"), labels: { env: "dev" } });
    expect(changes()).toBe(2); // facts changed, the catalogue did not
    f.set("a", facts("202601.01.0", { kubernetes: [], nodePools: [] }));
    expect(changes()).toBe(3);
    await releases.remove({ kind: "kubernetes", version: "1.31.2" });
    expect(catalogue.available().kubernetes).toEqual([]);
    expect(changes()).toBe(4);
    await expect(
      releases.remove({ kind: "kubernetes", version: "1.31.2" }),
    ).rejects.toThrow('There is no release "kubernetes 1.31.2"');
  });

  it("lets every replica follow the releases published through another", async () => {
    const { store, releases } = await setup({});
    const other = createReleases({ store });
    await other.start();
    let heard = 0;
    other.onChange(() => {
      heard += 1;
    });
    const following = new AbortController();
    await other.follow(following.signal);
    await releases.add(release({ kind: "kubernetes", version: "1.31.2" }));
    await waitFor(() => (other.list().length === 1 ? true : undefined));
    expect(other.list()).toEqual(releases.list());
    await releases.remove({ kind: "kubernetes", version: "1.31.2" });
    await waitFor(() => (other.list().length === 0 ? true : undefined));
    expect(heard).toBe(2);
    following.abort();
  });

  it("keeps releases in the store: a new hub reads them back", async () => {
    const { store, releases } = await setup({});
    await releases.add(release({ kind: "kubernetes", version: "1.31.2" }));
    const again = createReleases({ store });
    await again.start();
    expect(again.list()).toEqual(releases.list());
  });
});

describe("release validation", () => {
  const clusters: Cluster[] = [
    {
      name: "a",
      labels: {},
      groups: [],
      kubernetesVersion: "1.30.5",
      nodePools: [
        { name: "p", imageFamily: UBUNTU, imageVersion: "202603.01.0" },
      ],
    },
    {
      name: "b",
      labels: {},
      groups: [],
      kubernetesVersion: "1.31.1",
      nodePools: [],
    },
  ];
  const refusal = (input: Parameters<typeof validateRelease>[0]) => {
    try {
      validateRelease(input, clusters, "alice", NOW);
    } catch (error) {
      const e = FlotillaError.from(error);
      return { code: e.code, problems: e.problems };
    }
    return undefined;
  };

  it("normalizes a Kubernetes release and keeps its marks", () => {
    expect(
      validateRelease(
        { kind: "kubernetes", version: "v1.31.2", lts: true, preview: false },
        clusters,
        "alice",
        NOW,
      ),
    ).toEqual({
      kind: "kubernetes",
      version: "1.31.2",
      lts: true,
      addedAtMs: NOW,
      addedBy: "alice",
    });
  });

  it("refuses a malformed version, naming the field", () => {
    expect(refusal({ kind: "kubernetes", version: "1.31" })).toEqual({
      code: "invalid_argument",
      problems: [expect.objectContaining({ path: "version", value: "1.31" })],
    });
    expect(
      refusal({ kind: "node-image", family: "", version: "2026 03" }),
    ).toEqual({
      code: "invalid_argument",
      problems: [
        expect.objectContaining({ path: "family", value: "" }),
        expect.objectContaining({ path: "version", value: "2026 03" }),
      ],
    });
    expect(refusal({ kind: "os", version: "1" })?.problems).toEqual([
      expect.objectContaining({ path: "kind", value: "os" }),
    ]);
  });

  it("refuses a release older than what every cluster runs, and says so", () => {
    expect(refusal({ kind: "kubernetes", version: "1.30.4" })).toEqual({
      code: "invalid_argument",
      problems: [
        {
          path: "version",
          message:
            "is older than what every cluster already runs (the oldest runs 1.30.5): Kubernetes does not downgrade",
          value: "1.30.4",
        },
      ],
    });
    expect(refusal({ kind: "kubernetes", version: "1.30.6" })).toBeUndefined();
    expect(
      refusal({ kind: "node-image", family: UBUNTU, version: "202602.01.0" })
        ?.problems,
    ).toEqual([
      expect.objectContaining({
        path: "version",
        message: `is older than the image every node pool of family "${UBUNTU}" already runs`,
      }),
    ]);
  });
});

describe("update runs and the catalogue", () => {
  it("offers an operator's Kubernetes target to clusters that cannot tell, until releases are published", async () => {
    const { catalogue, releases } = await setup({
      a: facts("1", { kubernetes: [{ version: "1.31.2" }], nodePools: [] }),
      b: facts("1"),
    });
    const full = {
      kind: "upgrade" as const,
      upgrade: {
        type: "Full" as const,
        kubernetesVersion: "1.31.2",
        nodeImageSelection: "Latest" as const,
      },
    };
    const reports = (c: string) => c === "a";
    expect(
      runAvailable(catalogue, ["a", "b"], full, reports).kubernetes,
    ).toEqual([
      { version: "1.31.2", clusters: ["a"] },
      { version: "1.31.2", clusters: ["b"] },
    ]);
    await releases.add(release({ kind: "kubernetes", version: "1.31.3" }));
    expect(
      runAvailable(catalogue, ["a", "b"], full, reports).kubernetes,
    ).toEqual([{ version: "1.31.2", clusters: ["a"] }, { version: "1.31.3" }]);
  });

  it("creates node-image runs with the catalogue and tells running runs of its changes", async () => {
    const setupResult = await setup({
      a: facts("202601.01.0", {
        kubernetes: [],
        nodePools: [{ pool: "system", imageVersions: ["202602.01.0"] }],
      }),
      b: facts("202601.01.0", { kubernetes: [], nodePools: [] }),
    });
    const { catalogue, store, releases } = setupResult;
    const runs = createRunManager({
      store,
      intents: createIntentWriter(createMemoryIntentPublisher()),
      directory: setupResult.fleet,
      now: () => NOW,
      logger: pino({ level: "silent" }),
      catalogue,
      reportsCatalogue: () => true,
    });
    await runs.start();
    const created = await runs.create({
      name: "images",
      payload: {
        kind: "upgrade",
        upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
      },
    });
    const members = created.run.stages.flatMap((s) =>
      s.groups.flatMap((g) => g.members),
    );
    expect(members.map((m) => [m.name, m.state, m.message])).toEqual([
      ["a", "NotStarted", ""],
      [
        "b",
        "Skipped",
        `cluster "b" has no node pool to upgrade: skipped upgrade of node pool(s) "system" (no ${UBUNTU} image is offered)`,
      ],
    ]);
    expect(created.run.available?.nodeImages).toEqual([
      { family: UBUNTU, version: "202602.01.0", clusters: ["a"] },
    ]);
    const consistent = await runs.create({
      name: "common",
      payload: {
        kind: "upgrade",
        upgrade: { type: "NodeImageOnly", nodeImageSelection: "Consistent" },
      },
    });
    expect(consistent.run.consistentNodeImages).toEqual({});
    await runs.command("images", { type: "StartRun", actor: "t" });
    await runs.idle();
    await releases.add(
      release({ kind: "node-image", family: UBUNTU, version: "202605.01.0" }),
    );
    await runs.idle();
    // Taken on the next tick.
    expect(runs.get("images").run.available?.nodeImages).toHaveLength(1);
    runs.tick();
    await runs.idle();
    expect(runs.get("images").run.available?.nodeImages).toEqual([
      { family: UBUNTU, version: "202602.01.0", clusters: ["a"] },
      { family: UBUNTU, version: "202605.01.0" },
    ]);
    // Every run that has not finished hears of it; a Consistent choice stays as it was made.
    expect(runs.get("common").run.available?.nodeImages).toHaveLength(2);
    expect(runs.get("common").run.consistentNodeImages).toEqual({});
    runs.stop();
  });

  it("starts a member held for a Kubernetes target once the target is released", async () => {
    const setupResult = await setup({
      a: facts("1", { kubernetes: [{ version: "1.30.9" }], nodePools: [] }),
    });
    const { catalogue, store, releases } = setupResult;
    const runs = createRunManager({
      store,
      intents: createIntentWriter(createMemoryIntentPublisher()),
      directory: setupResult.fleet,
      now: () => NOW,
      logger: pino({ level: "silent" }),
      catalogue,
      reportsCatalogue: () => true,
    });
    await runs.start();
    await runs.create({
      name: "k8s",
      payload: {
        kind: "upgrade",
        upgrade: {
          type: "ControlPlaneOnly",
          kubernetesVersion: "1.31.2",
          nodeImageSelection: "Latest",
        },
      },
    });
    await runs.command("k8s", { type: "StartRun", actor: "t" });
    await runs.idle();
    const member = () => runs.get("k8s").run.stages[0]?.groups[0]?.members[0];
    expect(member()).toMatchObject({
      state: "Pending",
      message: "Kubernetes 1.31.2 is not yet available",
    });
    await releases.add(release({ kind: "kubernetes", version: "1.31.2" }));
    runs.tick();
    await runs.idle();
    expect(member()?.state).toBe("Running");
    runs.stop();
  });
});
