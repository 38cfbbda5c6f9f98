/**
 * The GitRepo manager against real repositories (the testkit's git servers) and a real bundle
 * manager over the in-memory store: commits become bundles, only changed bundles get revisions,
 * a bad commit applies nothing, removed directories delete their bundles, force pushes and
 * vanished branches are refused, names others own are never taken, and a restarted manager
 * resumes (docs/gitops.md#sync).
 */
import pino from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  startGitServer,
  waitFor,
  type GitServer,
  type TestGitRepo,
} from "@flotilla/testkit";
import { createGitClient } from "../src/gitrepos/git-client.js";
import {
  createGitRepoManager,
  type GitRepoManager,
} from "../src/gitrepos/gitrepo-manager.js";
import type { GitRepoInput } from "../src/gitrepos/gitrepo-service.js";
import { startTestHub } from "./hub-harness.js";
import {
  bundleSpec,
  clusters,
  configMap,
  startHarness,
  type Harness,
} from "./bundles-fixtures.js";

let server: GitServer;

beforeAll(async () => {
  server = await startGitServer();
});

afterAll(async () => {
  await server.close();
});

const FLEET = "defaultNamespace: web\ntargets:\n- clusterSelector: {}\n";

/** apps/NAME with a fleet.yaml and one ConfigMap at `version`. */
function app(name: string, version: string): Record<string, string> {
  return {
    [`apps/${name}/fleet.yaml`]: FLEET,
    [`apps/${name}/cm.json`]: configMap(version, name),
  };
}

let repoCount = 0;

async function setup(): Promise<{
  h: Harness;
  repo: TestGitRepo;
  open: () => Promise<GitRepoManager>;
  input: GitRepoInput;
  [Symbol.asyncDispose]: () => Promise<void>;
}> {
  const h = await startHarness(clusters(2));
  repoCount += 1;
  const repo = await server.createRepo(`r${String(repoCount)}`);
  const managers: GitRepoManager[] = [];
  const open = async (): Promise<GitRepoManager> => {
    const m = createGitRepoManager({
      store: h.store,
      bundles: h.manager,
      git: createGitClient(),
      now: () => Date.now(),
      log: pino({ level: "silent" }),
      every: () => () => undefined,
    });
    await m.start();
    managers.push(m);
    return m;
  };
  const input: GitRepoInput = {
    name: "fleet",
    repo: repo.gitUrl,
    branch: "main",
    paths: ["apps"],
    pollIntervalSeconds: 15,
    deleteRemoved: true,
  };
  return {
    h,
    repo,
    open,
    input,
    async [Symbol.asyncDispose]() {
      for (const m of managers) await m.stop();
      await h[Symbol.asyncDispose]();
    },
  };
}

async function revisions(h: Harness): Promise<Record<string, string>> {
  return Object.fromEntries(
    (await h.manager.list()).map((b) => [b.record.name, b.record.revision]),
  );
}

describe("GitRepo manager", () => {
  test("a commit becomes bundles; a change of one path changes only its bundle; a removed path deletes its bundle", async () => {
    await using t = await setup();
    const first = await t.repo.commit("main", {
      ...app("a", "1"),
      ...app("b", "1"),
      ...app("c", "1"),
      "README.md": "not a bundle\n",
    });
    const m = await t.open();
    await m.add(t.input);
    const synced = await m.sync("fleet");
    expect(synced).toMatchObject({
      commitSeen: first,
      commitDeployed: first,
      bundles: [
        { bundle: "fleet-apps-a", path: "apps/a", targets: 2 },
        { bundle: "fleet-apps-b", path: "apps/b", targets: 2 },
        { bundle: "fleet-apps-c", path: "apps/c", targets: 2 },
      ],
    });
    expect(synced.lastError).toBeUndefined();
    const before = await revisions(t.h);
    expect(Object.keys(before)).toEqual([
      "fleet-apps-a",
      "fleet-apps-b",
      "fleet-apps-c",
    ]);

    const second = await t.repo.commit("main", app("b", "2"));
    expect((await m.sync("fleet")).commitDeployed).toBe(second);
    const after = await revisions(t.h);
    expect(after["fleet-apps-a"]).toBe(before["fleet-apps-a"]);
    expect(after["fleet-apps-c"]).toBe(before["fleet-apps-c"]);
    expect(after["fleet-apps-b"]).not.toBe(before["fleet-apps-b"]);

    const third = await t.repo.commit("main", {
      "apps/c/fleet.yaml": null,
      "apps/c/cm.json": null,
    });
    const removed = await m.sync("fleet");
    expect(removed.commitDeployed).toBe(third);
    expect(removed.bundles.map((b) => b.bundle)).toEqual([
      "fleet-apps-a",
      "fleet-apps-b",
    ]);
    expect(Object.keys(await revisions(t.h))).toEqual([
      "fleet-apps-a",
      "fleet-apps-b",
    ]);
  });

  test("a broken fleet.yaml applies nothing and says which commit, directory and problem", async () => {
    await using t = await setup();
    const good = await t.repo.commit("main", {
      ...app("a", "1"),
      ...app("b", "1"),
    });
    const m = await t.open();
    await m.add(t.input);
    await m.sync("fleet");
    const before = await revisions(t.h);
    const bad = await t.repo.commit("main", {
      ...app("a", "2"),
      "apps/b/fleet.yaml": "targets: [unclosed\n",
    });
    const status = await m.sync("fleet");
    expect(status.commitDeployed).toBe(good);
    expect(status.commitSeen).toBe(bad);
    expect(status.lastError).toMatchObject({
      commit: bad,
      message: expect.stringMatching(
        new RegExp(
          `commit ${bad.slice(0, 12)}: nothing applied: apps/b/fleet\\.yaml:\\d+:\\d+: `,
        ),
      ) as string,
    });
    // Not even the good change of apps/a was applied.
    expect(await revisions(t.h)).toEqual(before);

    // A manifest the hub refuses (the bundle manager's own check) applies nothing either.
    await t.repo.commit("main", {
      "apps/b/fleet.yaml": FLEET,
      "apps/b/cm.json": JSON.stringify({ kind: "ConfigMap" }),
    });
    const refused = await m.sync("fleet");
    expect(refused.lastError?.message).toMatch(/apps\/b: .*cm\.json/);
    expect(await revisions(t.h)).toEqual(before);

    const fixed = await t.repo.commit("main", app("b", "1"));
    const ok = await m.sync("fleet");
    expect(ok.commitDeployed).toBe(fixed);
    expect(ok.lastError).toBeUndefined();
    expect((await revisions(t.h))["fleet-apps-a"]).not.toBe(
      before["fleet-apps-a"],
    );
  });

  test("a force push and a deleted branch apply nothing; an update accepts the new history", async () => {
    await using t = await setup();
    const first = await t.repo.commit("main", app("a", "1"));
    const m = await t.open();
    await m.add(t.input);
    await m.sync("fleet");
    const before = await revisions(t.h);
    const rewritten = await t.repo.forcePush("main", app("a", "9"));
    const refused = await m.sync("fleet");
    expect(refused.commitDeployed).toBe(first);
    expect(refused.lastError?.message).toMatch(
      /does not descend from the deployed commit .*force push/,
    );
    expect(await revisions(t.h)).toEqual(before);

    await t.repo.deleteBranch("main");
    const gone = await m.sync("fleet");
    expect(gone.lastError?.message).toMatch(/branch not found: main/);
    expect(gone.commitDeployed).toBe(first);
    expect(await revisions(t.h)).toEqual(before);

    const again = await t.repo.forcePush("main", app("a", "8"));
    expect(again).not.toBe(rewritten);
    await m.update(t.input);
    const accepted = await m.sync("fleet");
    expect(accepted.commitDeployed).toBe(again);
    expect((await revisions(t.h))["fleet-apps-a"]).not.toBe(
      before["fleet-apps-a"],
    );
  });

  test("never takes over a bundle made by bundle apply or another repository", async () => {
    await using t = await setup();
    await t.h.manager.apply(bundleSpec({ name: "fleet-apps-a" }), "by hand");
    const mine = await revisions(t.h);
    await t.repo.commit("main", { ...app("a", "1"), ...app("b", "1") });
    const m = await t.open();
    await m.add(t.input);
    const status = await m.sync("fleet");
    expect(status.lastError?.message).toMatch(
      /apps\/a: bundle fleet-apps-a exists and was not made by this GitRepo/,
    );
    expect(await revisions(t.h)).toEqual(mine);

    // Another repository claims its names first.
    await t.h.manager.delete("fleet-apps-a", "cleanup");
    await m.add({ ...t.input, name: "other", paths: ["apps/a"] });
    const other = await m.sync("other");
    expect(other.bundles.map((b) => b.bundle)).toEqual(["other-apps-a"]);
    await t.repo.commit("main", {
      "apps/a/fleet.yaml": `name: other-apps-a\n${FLEET}`,
    });
    const clash = await m.sync("fleet");
    expect(clash.lastError?.message).toMatch(
      /apps\/a: bundle other-apps-a belongs to GitRepo other/,
    );
  });

  test("a restarted manager resumes from the store: nothing new, then new commits", async () => {
    await using t = await setup();
    await t.repo.commit("main", app("a", "1"));
    const m = await t.open();
    await m.add({ ...t.input, credentials: null });
    const first = await m.sync("fleet");
    await m.stop();
    const before = await revisions(t.h);

    const restarted = await t.open();
    expect(await restarted.get("fleet")).toMatchObject({
      commitDeployed: first.commitDeployed,
      bundles: [{ bundle: "fleet-apps-a" }],
    });
    await restarted.sync("fleet");
    expect(await revisions(t.h)).toEqual(before);
    const next = await t.repo.commit("main", app("a", "2"));
    expect((await restarted.sync("fleet")).commitDeployed).toBe(next);
    await restarted.delete("fleet", true);
    expect(await revisions(t.h)).toEqual({});
    await expect(restarted.get("fleet")).rejects.toMatchObject({
      code: "not_found",
    });
  });

  test("keeps credentials apart: used for the sync, never returned; a wrong token is a lastError", async () => {
    await using t = await setup();
    await using authed = await startGitServer({
      httpAuth: { username: "bot", password: "t0ken" },
    });
    const repo = await authed.createRepo("private");
    const commit = await repo.commit("main", app("a", "1"));
    const m = await t.open();
    const added = await m.add({
      ...t.input,
      repo: repo.httpUrl,
      credentials: { kind: "token", username: "bot", token: "t0ken" },
    });
    expect(added.credentials).toBe("token");
    const synced = await m.sync("fleet");
    expect(synced.commitDeployed).toBe(commit);
    expect(JSON.stringify([synced, await m.list()])).not.toContain("t0ken");

    await repo.commit("main", app("a", "2"));
    await m.update({
      ...t.input,
      repo: repo.httpUrl,
      credentials: { kind: "token", username: "bot", token: "wrong" },
    });
    const refused = await m.sync("fleet");
    expect(refused.commitDeployed).toBe(commit);
    expect(refused.lastError?.message).toMatch(/authentication failed/);
    expect(refused.lastError?.message).not.toContain("wrong");
    // Absent credentials in an update keep the stored ones; null removes them.
    expect(
      (await m.update({ ...t.input, repo: repo.httpUrl })).credentials,
    ).toBe("token");
    expect(
      (await m.update({ ...t.input, repo: repo.httpUrl, credentials: null }))
        .credentials,
    ).toBeUndefined();
  });

  test("polls each repository at its interval, only while this replica owns the syncs", async () => {
    await using t = await setup();
    const first = await t.repo.commit("main", app("a", "1"));
    let nowMs = Date.UTC(2026, 0, 1);
    let owner = false;
    const ticks: (() => void)[] = [];
    const m = createGitRepoManager({
      store: t.h.store,
      bundles: t.h.manager,
      git: createGitClient(),
      now: () => nowMs,
      log: pino({ level: "silent" }),
      owns: () => owner,
      random: () => 0.5,
      every: (_ms, tick) => {
        ticks.push(tick);
        return () => undefined;
      },
    });
    await m.start();
    await m.add({ ...t.input, pollIntervalSeconds: 60 });
    const fire = () => {
      for (const tick of ticks) tick();
    };
    fire();
    await m.idle();
    expect((await m.get("fleet")).lastSyncAtMs).toBeUndefined();
    owner = true;
    fire();
    await waitFor(async () => (await m.get("fleet")).commitDeployed === first, {
      timeoutMs: 20_000,
    });
    const second = await t.repo.commit("main", app("a", "2"));
    nowMs += 30_000;
    fire();
    await m.idle();
    expect((await m.get("fleet")).commitDeployed).toBe(first);
    nowMs += 31_000;
    fire();
    await waitFor(
      async () => (await m.get("fleet")).commitDeployed === second,
      {
        timeoutMs: 20_000,
      },
    );
    await m.stop();
  });

  test("the hub builds the manager: hub.gitRepos syncs into hub.bundles once the hub serves", async () => {
    const repo = await server.createRepo("through-hub");
    const commit = await repo.commit("main", app("a", "1"));
    const t = await startTestHub();
    try {
      await t.hub.gitRepos.add({
        name: "fleet",
        repo: repo.fileUrl,
        paths: ["apps"],
        pollIntervalSeconds: 15,
        deleteRemoved: true,
      });
      expect((await t.hub.gitRepos.sync("fleet")).commitDeployed).toBe(commit);
      expect((await t.hub.bundles.list()).map((b) => b.record.name)).toEqual([
        "fleet-apps-a",
      ]);
    } finally {
      await t.stop();
    }
  });

  test("symbolic links never lead out of the checkout", async () => {
    await using t = await setup();
    const commit = await t.repo.commit("main", {
      ...app("a", "1"),
      "apps/a/passwd.yaml": { symlink: "/etc/passwd" },
      outside: { symlink: "/etc" },
    });
    const m = await t.open();
    await m.add({ ...t.input, paths: ["apps", "outside"] });
    const refused = await m.sync("fleet");
    expect(refused.lastError?.message).toMatch(
      /outside: a symbolic link out of the repository/,
    );
    await m.update({ ...t.input, paths: ["apps"] });
    const synced = await m.sync("fleet");
    expect(synced.commitDeployed).toBe(commit);
    const files = (await t.h.manager.get("fleet-apps-a")).summary.record
      .manifests;
    expect(files.map((f) => f.path)).toEqual(["cm.json"]);
  });

  test("a sync asked of a replica that does not own the syncs is done by the owner", async () => {
    await using t = await setup();
    const commit = await t.repo.commit("main", app("a", "1"));
    const replica = (owns: boolean) =>
      createGitRepoManager({
        store: t.h.store,
        bundles: t.h.manager,
        git: createGitClient(),
        now: () => Date.now(),
        log: pino({ level: "silent" }),
        owns: () => owns,
        every: () => () => undefined,
      });
    const owner = replica(true);
    const other = replica(false);
    await owner.start();
    await other.start();
    try {
      await other.add({ ...t.input, pollIntervalSeconds: 3600 });
      // The owner sees the new repository through the store and syncs it at once.
      await waitFor(
        async () => (await owner.get("fleet")).commitDeployed === commit,
        { timeoutMs: 20_000 },
      );
      await owner.idle();
      // Its next poll is an hour away: only the request can deploy the next commit now.
      const next = await t.repo.commit("main", app("a", "2"));
      expect((await other.sync("fleet")).commitDeployed).toBe(next);
    } finally {
      await other.stop();
      await owner.stop();
    }
  });

  test("watch gives the status now, then each change, until aborted", async () => {
    await using t = await setup();
    const commit = await t.repo.commit("main", app("a", "1"));
    const m = await t.open();
    await m.add(t.input);
    const stop = new AbortController();
    const seen: (string | undefined)[] = [];
    const watching = (async () => {
      for await (const status of m.watch("fleet", stop.signal)) {
        seen.push(status.commitDeployed);
        if (status.commitDeployed !== undefined) stop.abort();
      }
    })();
    await waitFor(() => seen.length > 0);
    await m.sync("fleet");
    await watching;
    expect(seen[0]).toBeUndefined();
    expect(seen.at(-1)).toBe(commit);
    await expect(
      (async () => {
        for await (const _ of m.watch("nope", new AbortController().signal))
          return;
      })(),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  test("refuses bad input naming the field and the value, storing nothing", async () => {
    await using t = await setup();
    const m = await t.open();
    await expect(
      m.add({
        ...t.input,
        repo: "-upload-pack=evil",
        revision: "v1",
        paths: ["../etc"],
        pollIntervalSeconds: -1,
        credentials: { kind: "token", token: "" },
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        { path: "repo", value: "-upload-pack=evil" },
        { path: "revision" },
        { path: "paths[0]", value: "../etc" },
        { path: "pollIntervalSeconds", value: -1 },
        { path: "credentials.token" },
        { path: "credentials.kind" },
      ],
    });
    await expect(
      m.add({ ...t.input, repo: "https://bot:hunter2@example.com/x.git" }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        {
          path: "repo",
          value: "https://bot:(redacted)@example.com/x.git",
        },
      ],
    });
    // A strategy name must be a name.
    await expect(
      m.add({ ...t.input, updateStrategyName: "Rings!" }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        expect.objectContaining({
          path: "updateStrategyName",
          value: "Rings!",
        }),
      ],
    });
    expect(await m.list()).toEqual([]);
  });
});
