/**
 * Git repositories on the wire: a status through real protobuf and back reads as it was sent
 * (credentials by kind only), and add/update requests are checked whole, every problem with its
 * field path, secrets never shown.
 */
import { describe, expect, it } from "vitest";
import {
  gitCredentialsToWire,
  gitRepoFromWire,
  gitRepoInputFromWire,
  gitRepoSpecToWire,
  gitRepoToWire,
  loadProtocol,
  type GitRepoRequestWire,
  type GitRepoView,
  type wire,
} from "@flotilla/protocol";
import {
  TEST_SSH_ENCRYPTED_KEY,
  TEST_SSH_PRIVATE_KEY,
  TEST_SSH_PUBLIC_KEY,
} from "@flotilla/protocol/testing";

const STATUS: GitRepoView = {
  spec: {
    name: "apps",
    repo: "https://git.example.com/fleet/apps.git",
    branch: "main",
    paths: ["apps/web", "apps/db"],
    pollIntervalSeconds: 30,
    updateStrategyName: "rings",
    deleteRemoved: false,
  },
  credentials: "token",
  commitSeen: "a".repeat(40),
  commitDeployed: "b".repeat(40),
  lastError: {
    message: "fetch failed",
    commit: "a".repeat(40),
    atMs: 1_700_000_000_500,
  },
  lastSyncAtMs: 1_700_000_000_000,
  bundles: [
    {
      bundle: "apps-apps-web",
      path: "apps/web",
      revision: "r1",
      ready: 3,
      targets: 5,
      summary: "3/5 Ready, 1 Modified",
    },
  ],
  createdAtMs: 1_600_000_000_000,
  updatedAtMs: 1_650_000_000_000,
};

/** Sends a GetGitRepo answer through protobuf and returns what a client decodes. */
function sent(repo: wire.GitRepo): wire.GitRepo__Output {
  const get = loadProtocol().adminService.GetGitRepo;
  const answer = get.responseDeserialize(get.responseSerialize({ repo }));
  if (answer.repo === null) throw new Error("no repo");
  return answer.repo;
}

/** An add request through protobuf, as the hub reads it. */
function received(request: wire.AddGitRepoRequest): GitRepoRequestWire {
  const add = loadProtocol().adminService.AddGitRepo;
  return add.requestDeserialize(add.requestSerialize(request));
}

const APPS_SPEC: wire.GitRepoSpec = {
  repo: "https://git.example.com/fleet/apps.git",
  paths: [],
  pollIntervalSeconds: 0,
};

describe("git repository statuses", () => {
  it("read back as they were sent, credentials by kind", () => {
    expect(gitRepoFromWire(sent(gitRepoToWire(STATUS)))).toEqual(STATUS);
    const plain: GitRepoView = {
      spec: {
        name: "bare",
        repo: "file:///srv/git/apps",
        paths: ["."],
        pollIntervalSeconds: 15,
        deleteRemoved: true,
      },
      bundles: [],
      createdAtMs: 1,
      updatedAtMs: 2,
    };
    const back = gitRepoFromWire(sent(gitRepoToWire(plain)));
    expect(back).toEqual(plain);
    expect(sent(gitRepoToWire(plain)).credentials).toBe(
      "GIT_CREDENTIALS_KIND_NONE",
    );
  });
});

describe("add and update requests", () => {
  it("become the manager's input with defaults filled in", () => {
    const result = gitRepoInputFromWire(
      received({
        name: "apps",
        spec: APPS_SPEC,
        credentials: gitCredentialsToWire({
          kind: "token",
          token: "ghp_secret",
        }),
      }),
    );
    expect(result).toEqual({
      ok: true,
      value: {
        name: "apps",
        repo: APPS_SPEC.repo,
        paths: ["."],
        pollIntervalSeconds: 15,
        deleteRemoved: true,
        credentials: { kind: "token", token: "ghp_secret" },
      },
    });
    const ssh = gitRepoInputFromWire(
      received({
        name: "apps",
        spec: {
          ...gitRepoSpecToWire({
            ...STATUS.spec,
            repo: "git@github.com:fleet/apps.git",
          }),
        },
        credentials: gitCredentialsToWire({
          kind: "ssh",
          privateKey: TEST_SSH_PRIVATE_KEY,
          knownHosts: "github.com ssh-ed25519 AAAAC3Nz\n",
        }),
      }),
    );
    expect(ssh.ok && ssh.value).toMatchObject({
      branch: "main",
      paths: ["apps/web", "apps/db"],
      pollIntervalSeconds: 30,
      updateStrategyName: "rings",
      deleteRemoved: false,
      credentials: { kind: "ssh", privateKey: TEST_SSH_PRIVATE_KEY },
    });
  });

  it("are refused with every problem, by field path and value", () => {
    const result = gitRepoInputFromWire(
      received({
        name: "Apps_1",
        spec: {
          repo: "ftp://example.com/x",
          branch: "main",
          revision: "bad..ref",
          paths: ["/abs", "a/../b", "ok", "ok", "c\\d"],
          pollIntervalSeconds: 2,
          updateStrategy: "No Such",
        },
      }),
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => [p.path, p.value])).toEqual([
      ["name", "Apps_1"],
      ["spec.repo", "ftp://example.com/x"],
      ["spec.revision", "bad..ref"],
      ["spec.revision", "bad..ref"],
      ["spec.paths[0]", "/abs"],
      ["spec.paths[1]", "a/../b"],
      ["spec.paths[3]", "ok"],
      ["spec.paths[4]", "c\\d"],
      ["spec.pollIntervalSeconds", 2],
      ["spec.updateStrategy", "No Such"],
    ]);
    expect(result.problems[3]?.message).toMatch(
      /cannot be set with spec.branch/,
    );
    expect(result.problems[6]?.message).toBe("is listed twice");
    const long = gitRepoInputFromWire(
      received({
        name: "a",
        spec: { ...APPS_SPEC, pollIntervalSeconds: 86_401 },
      }),
    );
    expect(!long.ok && long.problems[0]?.message).toMatch(/5 s to 86400 s/);
  });

  it("refuse credentials that do not fit, never showing a secret", () => {
    const cases: [wire.AddGitRepoRequest, string, RegExp][] = [
      [
        {
          name: "a",
          spec: APPS_SPEC,
          credentials: { ssh: { privateKey: TEST_SSH_PUBLIC_KEY } },
        },
        "credentials.ssh.privateKey",
        /public key/,
      ],
      [
        {
          name: "a",
          spec: { ...APPS_SPEC, repo: "ssh://git@h/x" },
          credentials: { ssh: { privateKey: TEST_SSH_ENCRYPTED_KEY } },
        },
        "credentials.ssh.privateKey",
        /passphrase/,
      ],
      [
        {
          name: "a",
          spec: { ...APPS_SPEC, repo: "ssh://git@h/x" },
          credentials: { ssh: { privateKey: "hunter2-not-a-key" } },
        },
        "credentials.ssh.privateKey",
        /not a private key/,
      ],
      [
        {
          name: "a",
          spec: { ...APPS_SPEC, repo: "ssh://git@h/x" },
          credentials: {
            ssh: { privateKey: TEST_SSH_PRIVATE_KEY, knownHosts: "hunter2\n" },
          },
        },
        "credentials.ssh.knownHosts",
        /line 1 is not a known_hosts line/,
      ],
      [
        {
          name: "a",
          spec: APPS_SPEC,
          credentials: { token: { token: "hunter2 x" } },
        },
        "credentials.token.token",
        /spaces/,
      ],
      [
        {
          name: "a",
          spec: { ...APPS_SPEC, repo: "git@h:x.git" },
          credentials: { token: { token: "hunter2" } },
        },
        "credentials.token",
        /https/,
      ],
      [
        {
          name: "a",
          spec: { ...APPS_SPEC, repo: "https://me:hunter2@h/x.git" },
        },
        "spec.repo",
        /must not carry credentials/,
      ],
      [
        { name: "a", spec: APPS_SPEC, credentials: {} },
        "credentials",
        /token or an SSH key/,
      ],
    ];
    for (const [request, path, message] of cases) {
      const result = gitRepoInputFromWire(received(request));
      expect(result.ok, path).toBe(false);
      if (result.ok) continue;
      const found = result.problems.find((p) => p.path === path);
      expect(found?.message, path).toMatch(message);
      expect(JSON.stringify(result.problems)).not.toMatch(
        /hunter2|b3BlbnNzaC1rZXktdjE/,
      );
    }
  });

  it("take removeCredentials alone, not with new credentials", () => {
    const removed = gitRepoInputFromWire({
      name: "a",
      spec: sent(gitRepoToWire(STATUS)).spec,
      credentials: null,
      removeCredentials: true,
    });
    expect(removed.ok && removed.value.credentials).toBeNull();
    const both = gitRepoInputFromWire({
      name: "a",
      spec: sent(gitRepoToWire(STATUS)).spec,
      credentials: { token: { username: "", token: "t" }, kind: "token" },
      removeCredentials: true,
    });
    expect(!both.ok && both.problems.map((p) => p.path)).toEqual([
      "removeCredentials",
    ]);
  });
});
