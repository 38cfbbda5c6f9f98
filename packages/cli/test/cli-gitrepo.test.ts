/**
 * `flotilla gitrepo …` against a fake hub: the request each flag makes (credentials from files and
 * standard input, never argv), bad flags refused with exit 2 naming the flag and value before
 * anything is sent, `update` keeping what it is not told, the `get` view (last error prominent,
 * bundles table) in table, JSON and YAML, and `get --watch` until the repository settles.
 */
import { FlotillaError } from "@flotilla/core";
import { gitRepoToWire, type GitRepoView, type wire } from "@flotilla/protocol";
import {
  TEST_SSH_PRIVATE_KEY,
  TEST_SSH_PUBLIC_KEY,
} from "@flotilla/protocol/testing";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS, plainOptions } from "./fixtures.js";
import { GITREPO_SPEC_OPTIONS } from "../src/commands/gitrepo-input.js";
import { HUB_OPTIONS } from "../src/hub/options.js";
import { plainJson } from "../src/hub/output.js";
import { gitRepoLines } from "../src/render/gitrepo-view.js";

const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const NEWER = "fedcba9876543210fedcba9876543210fedcba98";

function view(overrides: Partial<GitRepoView> = {}): GitRepoView {
  return {
    spec: {
      name: "apps",
      repo: "https://git.example.com/fleet/apps.git",
      branch: "main",
      paths: ["web", "db"],
      pollIntervalSeconds: 30,
      deleteRemoved: true,
    },
    credentials: "token",
    commitSeen: COMMIT,
    commitDeployed: COMMIT,
    lastSyncAtMs: NOW_MS - 120_000,
    bundles: [
      {
        bundle: "apps-web",
        path: "web",
        revision: "3f2a9c",
        ready: 5,
        targets: 5,
        summary: "5/5 Ready",
      },
      {
        bundle: "apps-db",
        path: "db",
        revision: "77b1e0",
        ready: 2,
        targets: 3,
        summary: "2/3 Ready, 1 NotReady",
      },
    ],
    createdAtMs: NOW_MS - 86_400_000,
    updatedAtMs: NOW_MS - 3_600_000,
    ...overrides,
  };
}

const GET_VIEW = `Git repository apps
  Repository:       https://git.example.com/fleet/apps.git
  Follows:          branch main
  Paths:            web, db
  Poll interval:    30s
  Update strategy:  (none: each bundle's own rollout)
  Delete removed:   yes
  Credentials:      token
  Commit seen:      fedcba987654
  Commit deployed:  0123456789ab (behind)
  Last sync:        2m ago

  LAST ERROR (1m ago at commit fedcba987654):
    apps/db/fleet.yaml: helm.chart: is required

PATH  BUNDLE    REVISION  READY  SUMMARY
web   apps-web  3f2a9c    5/5    5/5 Ready
db    apps-db   77b1e0    2/3    2/3 Ready, 1 NotReady
`;

describe("flotilla gitrepo add", () => {
  it("sends the spec and the token read from a file, and prints the repository", async () => {
    await using hub = await startFakeHub({
      unary: {
        AddGitRepo: () => ({ repo: gitRepoToWire(view()) }),
      },
    });
    const io = memoryIo({ "token.txt": "ghp_secret123\n" });
    const { code, out, err } = await cliAgainst(
      hub,
      [
        "gitrepo",
        "add",
        "apps",
        "--repo",
        "https://git.example.com/fleet/apps.git",
        "--branch",
        "main",
        "--paths",
        "web,db",
        "--poll-interval",
        "30s",
        "--strategy",
        "rings",
        "--delete-removed=false",
        "--git-token-file",
        "token.txt",
        "--username",
        "bot",
        "--reason",
        "onboard",
      ],
      io,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(plainJson(hub.requests("AddGitRepo"))).toEqual([
      {
        name: "apps",
        spec: {
          repo: "https://git.example.com/fleet/apps.git",
          branch: "main",
          paths: ["web", "db"],
          pollIntervalSeconds: 30,
          updateStrategy: "rings",
          deleteRemoved: false,
        },
        credentials: {
          kind: "token",
          token: { username: "bot", token: "ghp_secret123" },
        },
        reason: "onboard",
      },
    ]);
    // The git token is not the hub's bearer token (`--token-file`, a connection option).
    expect(hub.calls[0]?.authorization).toBeUndefined();
    expect(out).toContain("Git repository apps added");
    expect(out).toContain("Credentials:      token");
    expect(out).not.toContain("ghp_secret123");
  });

  it("reads an SSH key from standard input", async () => {
    await using hub = await startFakeHub({
      unary: {
        AddGitRepo: () => ({
          repo: gitRepoToWire(view({ credentials: "ssh" })),
        }),
      },
    });
    const io = memoryIo(
      { known: "github.com ssh-ed25519 AAAAC3Nz\n" },
      { stdin: TEST_SSH_PRIVATE_KEY },
    );
    const { code, err } = await cliAgainst(
      hub,
      [
        "gitrepo",
        "add",
        "apps",
        "--repo",
        "git@github.com:fleet/apps.git",
        "--ssh-key-file",
        "-",
        "--known-hosts-file",
        "known",
      ],
      io,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(plainJson(hub.requests("AddGitRepo")[0]?.["credentials"])).toEqual({
      kind: "ssh",
      ssh: {
        privateKey: TEST_SSH_PRIVATE_KEY,
        knownHosts: "github.com ssh-ed25519 AAAAC3Nz\n",
      },
    });
  });

  it.each([
    [
      ["--repo", "ftp://x/y"],
      'flotilla: gitrepo add: --repo "ftp://x/y": must be an https://, http://, ssh://, git:// or file:// URL, or user@host:path',
    ],
    [
      ["--repo", "https://h/x", "--branch", "main", "--revision", "v1"],
      'flotilla: gitrepo add: --revision "v1": cannot be set with spec.branch: follow a branch or pin a revision',
    ],
    [
      ["--repo", "https://h/x", "--paths", "web,../etc"],
      "flotilla: gitrepo add: --paths \"web,../etc\": must not contain '..'",
    ],
    [
      ["--repo", "https://h/x", "--poll-interval", "2s"],
      'flotilla: gitrepo add: --poll-interval "2s": must be from 5 s to 86400 s (24 h)',
    ],
    [
      ["--repo", "https://h/x", "--poll-interval", "soon"],
      'flotilla: gitrepo add: --poll-interval "soon": must be a duration like 30s, 10m, 1h30m or 2d',
    ],
    [
      ["--repo", "https://h/x", "--delete-removed=no"],
      'option "--delete-removed" must be one of true, false (got "no")',
    ],
    [
      ["--repo", "ssh://git@h/x", "--ssh-key-file", "id.pub"],
      'flotilla: gitrepo add: --ssh-key-file "id.pub": is a public key; give the private key (the file without .pub)',
    ],
    [
      ["--repo", "https://h/x", "--git-token-file", "missing.txt"],
      "flotilla: gitrepo add: --git-token-file missing.txt: cannot read: no such file",
    ],
    [
      [
        "--repo",
        "https://h/x",
        "--git-token-file",
        "t",
        "--ssh-key-file",
        "id.pub",
      ],
      "flotilla: gitrepo add: --git-token-file and --ssh-key-file: give one or the other",
    ],
    [["--repo", "https://h/x", "--token", "abc"], 'unknown option "--token"'],
  ])("refuses %j with exit 2, sending nothing", async (flags, message) => {
    await using hub = await startFakeHub({ unary: {} });
    const io = memoryIo({ "id.pub": TEST_SSH_PUBLIC_KEY, t: "tok" });
    const { code, err } = await cliAgainst(
      hub,
      ["gitrepo", "add", "apps", ...flags],
      io,
    );
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(hub.calls).toEqual([]);
  });

  it("names NAME when it is not a DNS label", async () => {
    await using hub = await startFakeHub({ unary: {} });
    const { code, err } = await cliAgainst(hub, [
      "gitrepo",
      "add",
      "My_Repo",
      "--repo",
      "https://h/x",
    ]);
    expect(code).toBe(2);
    expect(err).toContain('NAME "My_Repo": must be a DNS label');
  });
});

describe("flotilla gitrepo options", () => {
  it("take no name of the hub connection options, which every command has", () => {
    const clashes = Object.keys(GITREPO_SPEC_OPTIONS).filter((name) =>
      Object.hasOwn(HUB_OPTIONS, name),
    );
    expect(clashes).toEqual([]);
  });
});

describe("flotilla gitrepo update", () => {
  it("keeps what it is not told, swaps a branch for a revision, and removes credentials", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetGitRepo: () => ({
          repo: gitRepoToWire(
            view({
              spec: { ...view().spec, updateStrategyName: "rings" },
            }),
          ),
        }),
        UpdateGitRepo: () => ({ repo: gitRepoToWire(view()) }),
      },
    });
    const { code, err } = await cliAgainst(hub, [
      "gitrepo",
      "update",
      "apps",
      "--revision",
      "v1.2.0",
      "--strategy",
      "",
      "--remove-credentials",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(plainJson(hub.requests("UpdateGitRepo"))).toEqual([
      {
        name: "apps",
        spec: {
          repo: "https://git.example.com/fleet/apps.git",
          revision: "v1.2.0",
          paths: ["web", "db"],
          pollIntervalSeconds: 30,
          deleteRemoved: true,
        },
        credentials: null,
        removeCredentials: true,
        reason: "",
      },
    ]);
  });

  it("refuses a bad value after reading the stored spec, sending no update", async () => {
    await using hub = await startFakeHub({
      unary: { GetGitRepo: () => ({ repo: gitRepoToWire(view()) }) },
    });
    const { code, err } = await cliAgainst(hub, [
      "gitrepo",
      "update",
      "apps",
      "--branch",
      "bad branch",
    ]);
    expect(code).toBe(2);
    expect(err).toContain(
      'flotilla: gitrepo update: --branch "bad branch": is not a valid git ref name',
    );
    expect(hub.requests("UpdateGitRepo")).toEqual([]);
  });
});

describe("flotilla gitrepo get, list, delete, sync", () => {
  it("shows the repository with its last error prominent and its bundles", async () => {
    const failing = view({
      commitSeen: NEWER,
      lastError: {
        message: "apps/db/fleet.yaml: helm.chart: is required",
        commit: NEWER,
        atMs: NOW_MS - 60_000,
      },
    });
    await using hub = await startFakeHub({
      unary: { GetGitRepo: () => ({ repo: gitRepoToWire(failing) }) },
    });
    const table = await cliAgainst(hub, ["gitrepo", "get", "apps"]);
    expect(table.err).toBe("");
    expect(table.out).toBe(GET_VIEW);
    expect(
      gitRepoLines(failing, plainOptions(), NOW_MS).join("\n") + "\n",
    ).toBe(GET_VIEW);
    const json = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "-o",
      "json",
    ]);
    expect(JSON.parse(json.out)).toMatchObject({
      repo: {
        name: "apps",
        credentials: "GIT_CREDENTIALS_KIND_TOKEN",
        lastError: { commit: NEWER },
      },
    });
    const yaml = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "-o",
      "yaml",
    ]);
    expect(parse(yaml.out)).toEqual(JSON.parse(json.out));
  });

  it("lists repositories, deletes keeping bundles, and syncs", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListGitRepos: () => ({
          repos: [
            gitRepoToWire(view()),
            gitRepoToWire(
              view({
                spec: {
                  ...view().spec,
                  name: "base",
                  branch: undefined,
                  revision: "v2",
                },
                bundles: [],
                lastError: { message: "auth failed\nmore", atMs: NOW_MS },
              }),
            ),
          ],
          nextPageToken: "",
        }),
        DeleteGitRepo: () => ({}),
        SyncGitRepo: () => ({ repo: gitRepoToWire(view()) }),
      },
    });
    const listed = await cliAgainst(hub, ["gitrepo", "list"]);
    expect(listed.out).toBe(
      [
        "NAME  REPO                                    FOLLOWS      DEPLOYED      BUNDLES READY  LAST SYNC  ERROR",
        "apps  https://git.example.com/fleet/apps.git  branch main  0123456789ab  1/2            2m ago     -",
        "base  https://git.example.com/fleet/apps.git  revision v2  0123456789ab  0/0            2m ago     auth failed",
        "",
      ].join("\n"),
    );
    const deleted = await cliAgainst(hub, [
      "gitrepo",
      "delete",
      "apps",
      "--keep-bundles",
    ]);
    expect(deleted.out).toBe(
      "Git repository apps deleted; its bundles were kept.\n",
    );
    expect(hub.requests("DeleteGitRepo")).toEqual([
      { name: "apps", keepBundles: true, reason: "" },
    ]);
    const synced = await cliAgainst(hub, [
      "gitrepo",
      "sync",
      "apps",
      "--reason",
      "now",
    ]);
    expect(synced.code).toBe(0);
    expect(hub.requests("SyncGitRepo")).toEqual([
      { name: "apps", reason: "now" },
    ]);
  });

  it("reports the hub's refusal with its code's exit", async () => {
    await using hub = await startFakeHub({
      unary: {
        GetGitRepo: () => {
          throw new FlotillaError(
            "not_found",
            'Git repository "ghost" not found',
          );
        },
      },
    });
    const { code, err } = await cliAgainst(hub, ["gitrepo", "get", "ghost"]);
    expect(code).toBe(1);
    expect(err).toContain('Git repository "ghost" not found');
  });
});

describe("flotilla gitrepo get --watch", () => {
  /** A fake WatchGitRepo sending `views` in order, then leaving the stream open or ending it. */
  function watchSending(
    views: readonly GitRepoView[],
    end: boolean,
  ): wire.AdminServiceHandlers["WatchGitRepo"] {
    return (call) => {
      for (const v of views) call.write({ repo: gitRepoToWire(v) });
      if (end) call.end();
    };
  }

  const behind = view({ commitSeen: NEWER });
  const rolling = view({ commitSeen: NEWER, commitDeployed: NEWER });
  const settled = view({
    commitSeen: NEWER,
    commitDeployed: NEWER,
    bundles: view().bundles.map((b) => ({ ...b, ready: b.targets })),
  });

  it("redraws at each change and exits 0 once every bundle is Ready at the deployed commit", async () => {
    await using hub = await startFakeHub({
      streams: {
        WatchGitRepo: watchSending([behind, rolling, settled, behind], false),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "--watch",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out.split("Git repository apps\n")).toHaveLength(4);
    expect(out).toContain("Commit deployed:  0123456789ab (behind)");
    expect(
      out
        .trimEnd()
        .endsWith("db    apps-db   77b1e0    3/3    2/3 Ready, 1 NotReady"),
    ).toBe(true);
  });

  it("with -o json prints one status a line; exits 3 when the hub ends the watch first", async () => {
    await using hub = await startFakeHub({
      streams: { WatchGitRepo: watchSending([behind, rolling], true) },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "--watch",
      "-o",
      "json",
    ]);
    expect(code).toBe(3);
    expect(err).toContain(
      "ended the watch of git repository apps before it settled",
    );
    const lines = out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { repo: { commitDeployed: string } });
    expect(lines.map((l) => l.repo.commitDeployed)).toEqual([COMMIT, NEWER]);
  });

  it("with --follow keeps following after the repository settles", async () => {
    await using hub = await startFakeHub({
      streams: { WatchGitRepo: watchSending([settled, behind], true) },
    });
    const { code, out } = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "--watch",
      "--follow",
    ]);
    expect(code).toBe(3);
    expect(out.split("Git repository apps\n")).toHaveLength(3);
    const refused = await cliAgainst(hub, [
      "gitrepo",
      "get",
      "apps",
      "--follow",
    ]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("--follow: needs --watch");
  });
});
