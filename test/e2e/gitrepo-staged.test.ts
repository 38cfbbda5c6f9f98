/**
 * A git repository whose commits roll out as staged runs, end to end (docs/gitops.md#staged-rollouts,
 * docs/semantics.md#staged-bundles): a real repository served by the testkit's git server,
 * nats-server, the hub, simulated agents and the built CLI. `gitrepo add --strategy rings` makes
 * each commit's new bundle revision a staged run the hub creates and starts: canary, then the
 * wave, then the final ring behind an approval gate. The partitions never release a revision first;
 * a commit pushed while the previous commit's run waits at its gate supersedes that run, which
 * stops at once; approving the newest run brings every cluster to the newest commit.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  startGitServer,
  waitFor,
  type GitServer,
  type TestGitRepo,
} from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let git: GitServer;
let repo: TestGitRepo;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-gitrepo-staged-"));
  git = await startGitServer();
  repo = await git.createRepo("fleet");
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("canary-", 1, { ring: "canary" }),
      clusters("wave-", 2, { ring: "wave" }),
      clusters("final-", 2, { ring: "final" }),
    ]),
  );
  await e2e.connected(5);
});

afterEach(() =>
  Promise.all([
    e2e.stop(),
    git.close(),
    rm(work, { recursive: true, force: true }),
  ]),
);

/** The repository's one bundle at `version`. */
function web(version: string): Record<string, string> {
  return {
    "web/fleet.yaml":
      "defaultNamespace: web\ntargets:\n- clusterSelector: {}\nrolloutStrategy:\n  maxUnavailable: 100%\n",
    "web/config.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  version: "${version}"\n`,
  };
}

const BUNDLE = "fleet-web";

interface BundleView {
  readonly bundle: { readonly revision: string; readonly updateRun?: string };
  readonly clusters: {
    readonly cluster: string;
    readonly state: string;
    readonly releasedRevision?: string;
    readonly appliedRevision?: string;
    readonly runStage?: string;
  }[];
  readonly updateRun?: string;
}

async function bundleGet(): Promise<BundleView> {
  return JSON.parse(
    await e2e.ok("bundle", "get", BUNDLE, "-o", "json"),
  ) as BundleView;
}

/** Names of the clusters whose intent holds `revision`. */
function holding(view: BundleView, revision: string): string[] {
  return view.clusters
    .filter((c) => c.releasedRevision === revision)
    .map((c) => c.cluster)
    .sort();
}

/** The run of the bundle's current revision, once the hub has made it for commit `sha`. */
async function runOfCommit(
  sha: string,
  previous?: string,
): Promise<{ run: string; revision: string }> {
  await e2e.ok("gitrepo", "sync", "fleet");
  return await waitFor(
    async () => {
      const view = await bundleGet();
      const repoView = JSON.parse(
        await e2e.ok("gitrepo", "get", "fleet", "-o", "json"),
      ) as { repo: { commitDeployed?: string } };
      const run = view.updateRun;
      return repoView.repo.commitDeployed === sha &&
        run !== undefined &&
        run !== previous
        ? { run, revision: view.bundle.revision }
        : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200, message: `the run of ${sha}` },
  );
}

/** Waits until run `name`'s final ring waits at its gate; the gate's id. */
async function finalGate(name: string): Promise<string> {
  const gate = await waitFor(
    async () =>
      (await e2e.run(name)).stages[2]?.beforeGates.find(
        (g) => g.state === "Pending",
      ),
    { timeoutMs: 60_000, intervalMs: 200, message: `${name}'s final gate` },
  );
  return gate.id;
}

describe("a git repository rolled out commit by commit through staged runs", () => {
  it("makes a started run of each commit, holds the final ring at its gate, and lets a newer commit supersede a waiting run", async () => {
    const strategy = join(work, "rings.json");
    await writeFile(
      strategy,
      JSON.stringify({
        stages: [
          { name: "canary", memberSelector: { byLabel: "ring=canary" } },
          {
            name: "wave",
            memberSelector: { byLabel: "ring=wave" },
            maxConcurrency: 2,
            maxAllowedFailures: 1,
          },
          {
            name: "final",
            memberSelector: { byLabel: "ring=final" },
            beforeGates: [{ type: "Approval", displayName: "final ring" }],
          },
        ],
      }),
    );
    await e2e.ok("strategy", "create", "rings", "-f", strategy);

    // A strategy that does not exist is refused when the repository is added.
    const missing = await e2e.cli(
      "gitrepo",
      "add",
      "fleet",
      "--repo",
      repo.fileUrl,
      "--paths",
      "web",
      "--strategy",
      "nope",
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("updateStrategyName");
    expect(missing.stderr).toContain("nope");

    const first = await repo.commit("main", web("1"));
    await e2e.ok(
      "gitrepo",
      "add",
      "fleet",
      "--repo",
      repo.fileUrl,
      "--paths",
      "web",
      "--strategy",
      "rings",
    );
    const one = await runOfCommit(first);
    expect(one.run).toBe(`${BUNDLE}-${one.revision.slice(0, 8)}`);
    expect(await e2e.ok("gitrepo", "get", "fleet")).toContain("rings");
    const gate1 = await finalGate(one.run);
    // The wave is done, the final ring waits at the gate, and nothing reached it first.
    let view = await bundleGet();
    expect(holding(view, one.revision)).toEqual([
      "canary-01",
      "wave-01",
      "wave-02",
    ]);
    expect(view.clusters.find((c) => c.cluster === "wave-01")?.runStage).toBe(
      "wave",
    );
    expect(await e2e.ok("bundle", "get", BUNDLE)).toContain(
      `driven by staged run ${one.run}`,
    );
    await e2e.ok("run", "approve", one.run, gate1, "--reason", "wave healthy");
    const watched = await e2e.cli("gitrepo", "get", "fleet", "--watch");
    expect(watched.code, watched.stderr).toBe(0);
    expect((await e2e.run(one.run)).state).toBe("Completed");

    // Commit 2 waits at its gate; commit 3 supersedes its run.
    const second = await repo.commit("main", web("2"));
    const two = await runOfCommit(second, one.run);
    expect(two.revision).not.toBe(one.revision);
    await finalGate(two.run);
    view = await bundleGet();
    expect(holding(view, one.revision)).toEqual(["final-01", "final-02"]);

    const third = await repo.commit("main", web("3"));
    const three = await runOfCommit(third, two.run);
    const superseded = await e2e.run(two.run);
    expect(superseded.state).toBe("Stopped");
    expect(JSON.stringify(superseded)).toContain(
      `superseded by update run ${three.run}`,
    );
    const restart = await e2e.cli("run", "start", two.run);
    expect(restart.code).toBe(1);
    expect(restart.stderr).toContain("superseded");
    const audit = await e2e.ok("audit", "list", "-o", "json");
    expect(audit).toContain("/flotilla.hub/StagedBundleStopUpdateRun");
    expect(audit).toContain("/flotilla.hub/StagedBundleStartUpdateRun");

    const gate3 = await finalGate(three.run);
    await e2e.ok("run", "approve", three.run, gate3, "--reason", "ship it");
    const done = await e2e.cli("gitrepo", "get", "fleet", "--watch");
    expect(done.code, done.stderr).toBe(0);
    expect((await e2e.run(three.run)).state).toBe("Completed");
    view = await bundleGet();
    expect(holding(view, three.revision)).toEqual([
      "canary-01",
      "final-01",
      "final-02",
      "wave-01",
      "wave-02",
    ]);
    expect(view.updateRun).toBeUndefined();
  }, 180_000);
});
