/**
 * A git repository as the fleet's source, end to end (docs/gitops.md): a real repository served
 * over HTTP by `git http-backend` with a token, nats-server, the hub, simulated agents and the
 * built CLI. `gitrepo add` makes a bundle of each of three directories and `gitrepo get --watch`
 * returns once every cluster is Ready at the commit; a commit changing one directory makes a new
 * revision of that bundle only; a commit with a broken fleet.yaml applies nothing: the fleet stays
 * at the last good commit and `gitrepo get` shows the error with its commit.
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

const TOKEN = "e2e-git-token";

let e2e: E2E;
let git: GitServer;
let repo: TestGitRepo;
let work: string;

beforeEach(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-gitrepos-"));
  git = await startGitServer({
    httpAuth: { username: "x-access-token", password: TOKEN },
  });
  repo = await git.createRepo("fleet");
  e2e = await startE2E();
  await e2e.startAgents(
    "fleet",
    fleetFile([clusters("edge-", 3, { env: "edge" })]),
  );
  await e2e.connected(3);
});

afterEach(() =>
  Promise.all([
    e2e.stop(),
    git.close(),
    rm(work, { recursive: true, force: true }),
  ]),
);

const FLEET = "defaultNamespace: apps\ntargets:\n- clusterSelector: {}\n";

/** apps/NAME: a fleet.yaml and one ConfigMap at `version`. */
function app(name: string, version: string): Record<string, string> {
  return {
    [`apps/${name}/fleet.yaml`]: FLEET,
    [`apps/${name}/config.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  version: "${version}"\n`,
  };
}

interface GitRepoJson {
  readonly repo: {
    readonly commitSeen?: string;
    readonly commitDeployed?: string;
    readonly lastError?: { readonly message: string; readonly commit?: string };
    readonly bundles: readonly {
      readonly bundle: string;
      readonly path: string;
      readonly revision: string;
    }[];
  };
}

async function gitRepoGet(): Promise<GitRepoJson["repo"]> {
  return (
    JSON.parse(
      await e2e.ok("gitrepo", "get", "fleet", "-o", "json"),
    ) as GitRepoJson
  ).repo;
}

/** Each bundle's revision as `bundle get` reports it, and whether every cluster is Ready at it. */
async function bundleState(
  name: string,
): Promise<{ revision: string; readyEverywhere: boolean }> {
  const view = JSON.parse(
    await e2e.ok("bundle", "get", name, "-o", "json"),
  ) as {
    bundle: { revision: string };
    clusters: { state: string; appliedRevision?: string }[];
  };
  return {
    revision: view.bundle.revision,
    readyEverywhere:
      view.clusters.length === 3 &&
      view.clusters.every(
        (c) =>
          c.state === "BUNDLE_CLUSTER_STATE_READY" &&
          c.appliedRevision === view.bundle.revision,
      ),
  };
}

const BUNDLES = ["fleet-apps-a", "fleet-apps-b", "fleet-apps-c"];

describe("a git repository as the fleet's source", () => {
  it("follows commits to Ready, changes only the bundle a commit touches, and keeps the last good commit when one is broken", async () => {
    const first = await repo.commit("main", {
      ...app("a", "1"),
      ...app("b", "1"),
      ...app("c", "1"),
    });
    const tokenFile = join(work, "token");
    await writeFile(tokenFile, `${TOKEN}\n`);
    await e2e.ok(
      "gitrepo",
      "add",
      "fleet",
      "--repo",
      repo.httpUrl,
      "--paths",
      "apps/a,apps/b,apps/c",
      "--git-token-file",
      tokenFile,
    );
    // --watch returns once the commit is deployed and every bundle is Ready on every target.
    const watched = await e2e.cli("gitrepo", "get", "fleet", "--watch");
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toContain(first.slice(0, 12));
    expect((await gitRepoGet()).commitDeployed).toBe(first);
    const before = new Map<string, string>();
    for (const b of BUNDLES) {
      const state = await bundleState(b);
      expect(state.readyEverywhere, b).toBe(true);
      before.set(b, state.revision);
    }
    // The token was used (401 first, then accepted) and is never shown.
    expect(git.httpRequests.some((r) => r.status === 200)).toBe(true);
    expect(await e2e.ok("gitrepo", "get", "fleet")).not.toContain(TOKEN);

    // A commit that changes apps/b only: a new revision of fleet-apps-b, and nothing else.
    const second = await repo.commit("main", app("b", "2"));
    await e2e.ok("gitrepo", "sync", "fleet");
    const settled = await e2e.cli("gitrepo", "get", "fleet", "--watch");
    expect(settled.code, settled.stderr).toBe(0);
    expect((await gitRepoGet()).commitDeployed).toBe(second);
    const b2 = await bundleState("fleet-apps-b");
    expect(b2.revision).not.toBe(before.get("fleet-apps-b"));
    expect(b2.readyEverywhere).toBe(true);
    for (const b of ["fleet-apps-a", "fleet-apps-c"])
      expect((await bundleState(b)).revision, b).toBe(before.get(b));

    // A broken fleet.yaml in apps/c beside a good change of apps/a: nothing is applied.
    const broken = await repo.commit("main", {
      ...app("a", "2"),
      "apps/c/fleet.yaml": "targets: [unclosed\n",
    });
    await e2e.ok("gitrepo", "sync", "fleet");
    await waitFor(
      async () => (await gitRepoGet()).lastError?.commit === broken,
      { timeoutMs: 30_000, message: "the broken commit's error" },
    );
    const failed = await gitRepoGet();
    expect(failed.commitSeen).toBe(broken);
    expect(failed.commitDeployed).toBe(second);
    expect(failed.lastError?.message).toMatch(/apps\/c\/fleet\.yaml:\d+:\d+/);
    const table = await e2e.ok("gitrepo", "get", "fleet");
    expect(table).toContain("LAST ERROR");
    expect(table).toContain("apps/c/fleet.yaml");
    const a = await bundleState("fleet-apps-a");
    expect(a.revision).toBe(before.get("fleet-apps-a"));
    expect(a.readyEverywhere).toBe(true);
    expect((await bundleState("fleet-apps-c")).revision).toBe(
      before.get("fleet-apps-c"),
    );
  }, 120_000);
});
