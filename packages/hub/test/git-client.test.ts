/**
 * The hub's git client against real git servers of the testkit (git daemon, git http-backend with
 * a token check, file://): resolving branches, the default branch and tags, checkouts, and every
 * failure in its own words (docs/gitops.md#the-git-client).
 */
import { readFile, readdir, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startGitServer,
  type GitServer,
  type TestGitRepo,
} from "@flotilla/testkit";
import {
  createGitClient,
  DEFAULT_GIT_LIMITS,
  GitError,
  type GitErrorKind,
} from "../src/gitrepos/git-client.js";
import { freePort } from "@flotilla/testkit";

const AUTH = { username: "bot", password: "s3cret-token" };

let server: GitServer;
let repo: TestGitRepo;
let first: string;
let second: string;

beforeAll(async () => {
  server = await startGitServer({ httpAuth: AUTH });
  repo = await server.createRepo("fleet");
  first = await repo.commit("main", {
    "app/fleet.yaml": "namespace: web\n",
    "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
  });
  second = await repo.commit("main", { "app/cm2.yaml": "kind: ConfigMap\n" });
  await repo.commit("dev", { "x.yaml": "kind: ConfigMap\n" });
}, 30_000);

afterAll(async () => {
  await server.close();
});

async function failure(promise: Promise<unknown>): Promise<GitError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitError);
  return error as GitError;
}

const token = {
  kind: "token" as const,
  username: "bot",
  token: "s3cret-token",
};

describe("git client", () => {
  const git = createGitClient();

  it("resolves a branch, the default branch and a commit over git://, http:// and file://", async () => {
    for (const url of [repo.gitUrl, repo.fileUrl])
      expect(await git.resolve({ url }, { branch: "main" })).toBe(second);
    expect(
      await git.resolve({ url: repo.httpUrl, credentials: token }, {}),
    ).toBe(second);
    expect(await git.resolve({ url: repo.gitUrl }, { branch: "dev" })).toBe(
      await repo.head("dev"),
    );
    expect(await git.resolve({ url: repo.gitUrl }, { revision: first })).toBe(
      first,
    );
    // An annotated tag resolves to the commit it names.
    await repo.tag("v1", first);
    expect(await git.resolve({ url: repo.gitUrl }, { revision: "v1" })).toBe(
      first,
    );
  });

  it("checks out one commit into a directory that dispose removes", async () => {
    const checkout = await git.checkout(
      { url: repo.httpUrl, credentials: token },
      first,
    );
    expect(checkout.commit).toBe(first);
    expect((await readdir(`${checkout.dir}/app`)).sort()).toEqual([
      "cm.yaml",
      "fleet.yaml",
    ]);
    expect(await readFile(`${checkout.dir}/app/fleet.yaml`, "utf8")).toBe(
      "namespace: web\n",
    );
    await checkout.dispose();
    await expect(stat(checkout.dir)).rejects.toThrow(/ENOENT/);
  });

  it("tells whether a commit descends from an earlier one", async () => {
    const descends = await git.checkout({ url: repo.gitUrl }, second, {
      ancestor: { commit: first, timeSec: Math.floor(Date.now() / 1000) - 60 },
    });
    expect(descends.descends).toBe(true);
    await descends.dispose();
    const reverse = await git.checkout({ url: repo.gitUrl }, first, {
      ancestor: { commit: second, timeSec: Math.floor(Date.now() / 1000) - 60 },
    });
    expect(reverse.descends).toBe(false);
    await reverse.dispose();
    // No commit of the new history is as recent as the earlier one: it cannot descend from it.
    const older = await git.checkout({ url: repo.gitUrl }, first, {
      ancestor: {
        commit: second,
        timeSec: Math.floor(Date.now() / 1000) + 3600,
      },
    });
    expect(older.descends).toBe(false);
    expect(older.commitTimeSec).toBeGreaterThan(0);
    await older.dispose();
  });

  it("names each failure", async () => {
    const unused = `git://127.0.0.1:${String(await freePort())}/x.git`;
    const cases: [() => Promise<unknown>, GitErrorKind, RegExp][] = [
      [
        () => git.resolve({ url: repo.httpUrl }, {}),
        "authentication",
        /authentication failed/,
      ],
      [
        () =>
          git.resolve(
            { url: repo.httpUrl, credentials: { ...token, token: "wrong" } },
            {},
          ),
        "authentication",
        /authentication failed/,
      ],
      [
        () => git.resolve({ url: unused }, {}),
        "unreachable",
        /cannot be reached/,
      ],
      [
        () => git.resolve({ url: repo.gitUrl }, { branch: "nope" }),
        "branch_not_found",
        /branch not found: nope/,
      ],
      [
        () => git.resolve({ url: repo.gitUrl }, { revision: "v9" }),
        "revision_not_found",
        /no tag v9/,
      ],
      [
        () => git.checkout({ url: repo.gitUrl }, "0".repeat(40)),
        "revision_not_found",
        /revision not found/,
      ],
    ];
    for (const [promise, kind, message] of cases) {
      const error = await failure(promise());
      expect({ kind: error.kind, message: error.message }).toEqual({
        kind,
        message: expect.stringMatching(message) as string,
      });
      expect(error.message).not.toContain("s3cret-token");
      expect(error.message).not.toContain("wrong");
    }
    // The wrong token reached the server and was refused there.
    expect(server.httpRequests.some((r) => r.status === 401)).toBe(true);
  });

  it("refuses a checkout over the file and size limits, naming the limit and the value", async () => {
    const files = createGitClient({
      limits: { ...DEFAULT_GIT_LIMITS, maxFiles: 2 },
    });
    expect(
      (await failure(files.checkout({ url: repo.fileUrl }, second))).message,
    ).toMatch(
      /file limit exceeded: the commit has 3 files, more than 2 \(--git-max-files\)/,
    );
    const bytes = createGitClient({
      limits: { ...DEFAULT_GIT_LIMITS, maxBytes: 40 },
    });
    expect(
      (await failure(bytes.checkout({ url: repo.fileUrl }, first))).message,
    ).toMatch(/size limit exceeded: .*more than 40 \(--git-max-bytes\)/);
    const slow = createGitClient({
      limits: { ...DEFAULT_GIT_LIMITS, timeoutMs: 1 },
    });
    expect(
      (await failure(slow.resolve({ url: repo.gitUrl }, {}))).message,
    ).toMatch(
      /time limit exceeded: git did not finish within 1 ms \(--git-timeout\)/,
    );
  });
});

describe("git client over SSH (a local sshd, when installed)", () => {
  let ssh: GitServer;
  let sshRepo: TestGitRepo;
  let commit: string;

  beforeAll(async () => {
    ssh = await startGitServer({ ssh: true });
    sshRepo = await ssh.createRepo("over-ssh");
    commit = await sshRepo.commit("main", { "a.yaml": "kind: ConfigMap\n" });
  }, 30_000);

  afterAll(async () => {
    await ssh.close();
  });

  it("authenticates with the key, checks the host key, and names each refusal", async (context) => {
    const access = ssh.ssh;
    const url = sshRepo.sshUrl;
    if (access === undefined || url === undefined) {
      context.skip("no sshd on this machine (install openssh-server)");
      return;
    }
    const git = createGitClient();
    const key = {
      kind: "ssh" as const,
      privateKey: access.privateKey,
      knownHosts: access.knownHosts,
    };
    expect(await git.resolve({ url, credentials: key }, {})).toBe(commit);
    const checkout = await git.checkout({ url, credentials: key }, commit);
    expect(await readFile(`${checkout.dir}/a.yaml`, "utf8")).toBe(
      "kind: ConfigMap\n",
    );
    await checkout.dispose();

    const wrongKey = await failure(
      git.resolve(
        { url, credentials: { ...key, privateKey: access.otherPrivateKey } },
        {},
      ),
    );
    expect(wrongKey.kind).toBe("authentication");
    const otherHost = access.knownHosts.replace(
      /ssh-ed25519 \S+/,
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKxUBqGyHuV9Pol1h3xEcXW0Ywq/LnJxMFdDxGQJkGyy",
    );
    const spoofed = await failure(
      git.resolve({ url, credentials: { ...key, knownHosts: otherHost } }, {}),
    );
    expect(spoofed.kind).toBe("authentication");
    expect(spoofed.message).toMatch(/Host key verification failed/);
    expect(spoofed.message).not.toContain("PRIVATE KEY");
  });
});
