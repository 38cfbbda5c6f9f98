/**
 * The git repository methods of AdminService over real gRPC, behind admin authentication with
 * bearer tokens, against a small in-test GitRepo manager (the service boundary; the real manager
 * has its own tests): roles, validation into problems before the manager is asked, the audit
 * record of every change with no token or key in it nor in any answer, the watch, and a hub
 * without a manager.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import {
  callUnary,
  fromGrpcError,
  gitCredentialsToWire,
  loadProtocol,
  SERVER_OPTIONS,
  type UnaryRequest,
  type UnaryResponse,
  type wire,
} from "@flotilla/protocol";
import {
  TEST_SSH_PRIVATE_KEY,
  TEST_SSH_PUBLIC_KEY,
} from "@flotilla/protocol/testing";
import { waitFor } from "@flotilla/testkit";
import {
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  status,
  type ServiceError,
} from "@grpc/grpc-js";
import { createAdminServiceClient } from "@flotilla/protocol";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditLog } from "../src/audit/audit-log.js";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import type {
  GitRepoInput,
  GitRepoService,
  GitRepoStatus,
} from "../src/gitrepos/gitrepo-service.js";
import { gitRepoHandlers } from "../src/grpc/admin-gitrepos.js";
import { createHub } from "../src/hub.js";
import { createAdminAuth } from "../src/security/admin-auth.js";
import { loadAdminTokens } from "../src/security/admin-tokens.js";
import { memoryHubParts } from "./hub-harness.js";

const TOKENS = {
  viewer: "viewer-token-0123456789abcdef",
  operator: "operator-token-0123456789abcdef",
  admin: "admin-token-0123456789abcdef",
} as const;
type Role = keyof typeof TOKENS;

const GIT_TOKEN = "ghp_TopSecretGitToken0123456789";
const NOW = Date.parse("2026-12-05T10:00:00Z");

/** A GitRepo manager in memory: it stores what it is given and can be told to fail a sync. */
class MemoryGitRepos implements GitRepoService {
  readonly repos = new Map<string, GitRepoStatus>();
  readonly inputs: GitRepoInput[] = [];
  readonly calls: string[] = [];
  /** A sync fails with this message (as a git error quoting the URL might). */
  syncError: string | undefined;
  private readonly listeners = new Set<() => void>();

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private known(name: string): GitRepoStatus {
    const found = this.repos.get(name);
    if (found === undefined)
      throw new FlotillaError(
        "not_found",
        `Git repository "${name}" not found`,
      );
    return found;
  }

  private status(input: GitRepoInput, createdAtMs: number): GitRepoStatus {
    const { credentials: creds, ...spec } = input;
    const kind = creds?.kind;
    return {
      spec,
      ...(kind === undefined ? {} : { credentials: kind }),
      bundles: [],
      createdAtMs,
      updatedAtMs: NOW,
    };
  }

  add(input: GitRepoInput): Promise<GitRepoStatus> {
    this.calls.push(`add ${input.name}`);
    this.inputs.push(input);
    if (this.repos.has(input.name))
      return Promise.reject(
        new FlotillaError(
          "already_exists",
          `Git repository "${input.name}" exists`,
        ),
      );
    const made = this.status(input, NOW);
    this.repos.set(input.name, made);
    this.notify();
    return Promise.resolve(made);
  }

  update(input: GitRepoInput): Promise<GitRepoStatus> {
    this.calls.push(`update ${input.name}`);
    this.inputs.push(input);
    const old = this.known(input.name);
    const next = this.status(input, old.createdAtMs);
    const kept =
      input.credentials === undefined && old.credentials !== undefined
        ? { ...next, credentials: old.credentials }
        : next;
    this.repos.set(input.name, kept);
    this.notify();
    return Promise.resolve(kept);
  }

  delete(name: string, deleteBundles: boolean): Promise<void> {
    this.calls.push(`delete ${name} ${String(deleteBundles)}`);
    this.known(name);
    this.repos.delete(name);
    this.notify();
    return Promise.resolve();
  }

  get(name: string): Promise<GitRepoStatus> {
    return Promise.resolve(this.known(name));
  }

  list(): Promise<readonly GitRepoStatus[]> {
    return Promise.resolve([...this.repos.values()]);
  }

  sync(name: string): Promise<GitRepoStatus> {
    this.calls.push(`sync ${name}`);
    const old = this.known(name);
    if (this.syncError !== undefined)
      return Promise.reject(new FlotillaError("unavailable", this.syncError));
    const next: GitRepoStatus = {
      ...old,
      commitSeen: "c".repeat(40),
      commitDeployed: "c".repeat(40),
      lastSyncAtMs: NOW,
      bundles: [
        {
          bundle: `${name}-web`,
          path: "web",
          revision: "r2",
          ready: 1,
          targets: 2,
          summary: "1/2 Ready",
        },
      ],
    };
    this.repos.set(name, next);
    this.notify();
    return Promise.resolve(next);
  }

  async *watch(
    name: string,
    signal: AbortSignal,
  ): AsyncGenerator<GitRepoStatus> {
    let wake = (): void => undefined;
    const listener = (): void => {
      wake();
    };
    this.listeners.add(listener);
    signal.addEventListener("abort", listener);
    this.calls.push(`watch ${name}`);
    try {
      while (!signal.aborted) {
        const next = new Promise<void>((resolve) => {
          wake = resolve;
        });
        yield this.known(name);
        await next;
      }
    } finally {
      this.listeners.delete(listener);
      signal.removeEventListener("abort", listener);
      this.calls.push(`unwatch ${name}`);
    }
  }
}

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-gitrepos-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type GitMethod =
  | "addGitRepo"
  | "updateGitRepo"
  | "deleteGitRepo"
  | "getGitRepo"
  | "listGitRepos"
  | "syncGitRepo";

interface Served extends AsyncDisposable {
  readonly client: wire.AdminServiceClient;
  readonly audit: AuditLog;
  readonly repos: MemoryGitRepos;
  call<K extends GitMethod>(
    role: Role,
    method: K,
    request: UnaryRequest<wire.AdminServiceClient, K>,
  ): Promise<UnaryResponse<wire.AdminServiceClient, K>>;
  metadata(role: Role): Metadata;
}

/** The git repository handlers behind token authentication, on 127.0.0.1:0. */
async function serve(withManager = true): Promise<Served> {
  const file = join(dir, `tokens-${String(Math.random()).slice(2)}.yaml`);
  await writeFile(
    file,
    Object.entries(TOKENS)
      .map(
        ([role, token]) =>
          `- name: ${role}-bot\n  role: ${role}\n  token: ${token}\n`,
      )
      .join(""),
  );
  const tokens = await loadAdminTokens({
    file,
    logger: pino({ level: "silent" }),
  });
  const audit = createMemoryAuditLog();
  await audit.start();
  const deps = {
    audit,
    now: () => NOW,
    onAuditError: (error: unknown) => {
      throw error;
    },
  };
  const repos = new MemoryGitRepos();
  const auth = createAdminAuth({ ...deps, tokens });
  const server = new Server(SERVER_OPTIONS);
  server.addService(
    loadProtocol().adminService,
    auth.wrap(
      gitRepoHandlers({
        ...deps,
        gitRepos: withManager ? repos : undefined,
      }) as wire.AdminServiceHandlers,
    ),
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
      (e, p) => {
        if (e === null) resolve(p);
        else reject(e);
      },
    );
  });
  const client = createAdminServiceClient(
    `127.0.0.1:${String(port)}`,
    credentials.createInsecure(),
  );
  const metadata = (role: Role): Metadata => {
    const m = new Metadata();
    m.set("authorization", `Bearer ${TOKENS[role]}`);
    return m;
  };
  return {
    client,
    audit,
    repos,
    metadata,
    call: (role, method, request) =>
      callUnary(client, method, request, {
        timeoutMs: 5_000,
        metadata: metadata(role),
      }),
    async [Symbol.asyncDispose]() {
      client.close();
      server.forceShutdown();
      await audit.stop();
    },
  };
}

const APPS_SPEC: wire.GitRepoSpec = {
  repo: "https://git.example.com/fleet/apps.git",
  branch: "main",
  paths: ["web", "db"],
  pollIntervalSeconds: 30,
};

async function refusal(promise: Promise<unknown>): Promise<FlotillaError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FlotillaError) return error;
    throw error;
  }
  throw new Error("the call succeeded");
}

describe("git repository methods", () => {
  it("add, get, list, update, sync and delete through the manager, each change audited", async () => {
    await using hub = await serve();
    const added = await hub.call("admin", "addGitRepo", {
      name: "apps",
      spec: APPS_SPEC,
      credentials: gitCredentialsToWire({ kind: "token", token: GIT_TOKEN }),
      reason: "onboard apps",
    });
    expect(added.repo).toMatchObject({
      name: "apps",
      credentials: "GIT_CREDENTIALS_KIND_TOKEN",
      spec: {
        repo: APPS_SPEC.repo,
        branch: "main",
        paths: ["web", "db"],
        pollIntervalSeconds: 30,
        deleteRemoved: true,
      },
    });
    expect(hub.repos.inputs[0]).toEqual({
      name: "apps",
      repo: APPS_SPEC.repo,
      branch: "main",
      paths: ["web", "db"],
      pollIntervalSeconds: 30,
      deleteRemoved: true,
      credentials: { kind: "token", token: GIT_TOKEN },
    });
    expect(
      (await hub.call("viewer", "getGitRepo", { name: "apps" })).repo?.name,
    ).toBe("apps");
    await hub.call("admin", "addGitRepo", {
      name: "base",
      spec: { repo: "file:///srv/git/base", paths: [], pollIntervalSeconds: 0 },
    });
    const page = await hub.call("viewer", "listGitRepos", { pageSize: 1 });
    expect(page.repos.map((r) => r.name)).toEqual(["apps"]);
    const rest = await hub.call("viewer", "listGitRepos", {
      pageToken: page.nextPageToken,
    });
    expect(
      rest.repos.map((r) => [r.name, r.credentials, r.spec?.paths]),
    ).toEqual([["base", "GIT_CREDENTIALS_KIND_NONE", ["."]]]);
    const updated = await hub.call("admin", "updateGitRepo", {
      name: "apps",
      spec: {
        ...APPS_SPEC,
        branch: undefined,
        revision: "v1.2.0",
        deleteRemoved: false,
      },
      removeCredentials: true,
    });
    expect(hub.repos.inputs[2]).toMatchObject({
      revision: "v1.2.0",
      credentials: null,
      deleteRemoved: false,
    });
    expect(updated.repo?.spec?.branch).toBeUndefined();
    const synced = await hub.call("operator", "syncGitRepo", {
      name: "apps",
      reason: "now",
    });
    expect(synced.repo?.bundles).toEqual([
      {
        bundle: "apps-web",
        path: "web",
        revision: "r2",
        ready: 1,
        targets: 2,
        summary: "1/2 Ready",
      },
    ]);
    await hub.call("admin", "deleteGitRepo", {
      name: "apps",
      keepBundles: true,
    });
    await hub.call("admin", "deleteGitRepo", { name: "base" });
    expect(hub.repos.calls.filter((c) => c.startsWith("delete"))).toEqual([
      "delete apps false",
      "delete base true",
    ]);
    const { events } = await hub.audit.list({}, { pageSize: 100 });
    expect(
      events.map((e) => [
        e.method.split("/").at(-1),
        e.targetKind,
        e.targetName,
        e.outcome,
        e.actor,
      ]),
    ).toEqual([
      ["AddGitRepo", "GitRepo", "apps", "Succeeded", "token:admin-bot"],
      ["AddGitRepo", "GitRepo", "base", "Succeeded", "token:admin-bot"],
      ["UpdateGitRepo", "GitRepo", "apps", "Succeeded", "token:admin-bot"],
      ["SyncGitRepo", "GitRepo", "apps", "Succeeded", "token:operator-bot"],
      ["DeleteGitRepo", "GitRepo", "apps", "Succeeded", "token:admin-bot"],
      ["DeleteGitRepo", "GitRepo", "base", "Succeeded", "token:admin-bot"],
    ]);
    expect(events[0]?.reason).toBe("onboard apps");
  });

  it("let viewers read and watch, operators sync, and only admins add, update and delete", async () => {
    await using hub = await serve();
    await hub.call("admin", "addGitRepo", { name: "apps", spec: APPS_SPEC });
    for (const role of ["viewer", "operator"] as const) {
      for (const [method, request] of [
        ["addGitRepo", { name: "other", spec: APPS_SPEC }],
        ["updateGitRepo", { name: "apps", spec: APPS_SPEC }],
        ["deleteGitRepo", { name: "apps" }],
      ] as const) {
        const error = await refusal(hub.call(role, method, request));
        expect(error.code, `${method} as ${role}`).toBe("permission_denied");
      }
    }
    expect(
      (await refusal(hub.call("viewer", "syncGitRepo", { name: "apps" }))).code,
    ).toBe("permission_denied");
    await hub.call("operator", "syncGitRepo", { name: "apps" });
    await hub.call("viewer", "getGitRepo", { name: "apps" });
    await hub.call("viewer", "listGitRepos", {});
    expect(hub.repos.calls).toEqual(["add apps", "sync apps"]);
  });

  it("refuse a bad request with every problem before the manager hears of it, and audit the refusal", async () => {
    await using hub = await serve();
    const error = await refusal(
      hub.call("admin", "addGitRepo", {
        name: "Bad_Name",
        spec: {
          repo: "not a url",
          branch: "main",
          revision: "abc123",
          paths: ["../up", "/abs"],
          pollIntervalSeconds: 1,
        },
        credentials: gitCredentialsToWire({
          kind: "ssh",
          privateKey: TEST_SSH_PUBLIC_KEY,
        }),
        reason: "try",
      }),
    );
    expect(error.code).toBe("invalid_argument");
    expect(error.problems.map((p) => [p.path, p.value])).toEqual([
      ["name", "Bad_Name"],
      ["spec.repo", "not a url"],
      ["spec.revision", "abc123"],
      ["spec.paths[0]", "../up"],
      ["spec.paths[1]", "/abs"],
      ["spec.pollIntervalSeconds", 1],
      ["credentials.ssh.privateKey", undefined],
      ["credentials.ssh", undefined],
    ]);
    expect(hub.repos.calls).toEqual([]);
    const { events } = await hub.audit.list({}, { pageSize: 10 });
    expect(events).toMatchObject([
      {
        targetName: "Bad_Name",
        outcome: "Failed",
        errorCode: "invalid_argument",
        reason: "try",
      },
    ]);
    expect(JSON.stringify(events)).not.toContain("AAAAC3NzaC1lZDI1NTE5");
    const missing = await refusal(
      hub.call("admin", "updateGitRepo", { name: "ghost", spec: APPS_SPEC }),
    );
    expect(missing.code).toBe("not_found");
  });

  it("never put a token or a private key in an answer or an audit record, even when the manager's error quotes it", async () => {
    await using hub = await serve();
    const answers: unknown[] = [];
    answers.push(
      await hub.call("admin", "addGitRepo", {
        name: "apps",
        spec: APPS_SPEC,
        credentials: gitCredentialsToWire({
          kind: "token",
          username: "bot",
          token: GIT_TOKEN,
        }),
      }),
    );
    answers.push(await hub.call("viewer", "getGitRepo", { name: "apps" }));
    answers.push(await hub.call("viewer", "listGitRepos", {}));
    // An update whose manager call fails with a message quoting the credentials.
    const key = TEST_SSH_PRIVATE_KEY;
    const keyLine = key.split("\n")[2] ?? "";
    hub.repos.update = () =>
      Promise.reject(
        new FlotillaError(
          "unavailable",
          `git fetch ssh://git@h/x failed with key ${keyLine} and ${key}`,
        ),
      );
    const failed = await refusal(
      hub.call("admin", "updateGitRepo", {
        name: "apps",
        spec: { ...APPS_SPEC, repo: "ssh://git@h/x" },
        credentials: gitCredentialsToWire({ kind: "ssh", privateKey: key }),
      }),
    );
    expect(failed.message).toContain("(redacted)");
    answers.push(failed.message);
    hub.repos.update = MemoryGitRepos.prototype.update.bind(hub.repos);
    await hub.call("admin", "updateGitRepo", {
      name: "apps",
      spec: APPS_SPEC,
      credentials: gitCredentialsToWire({ kind: "token", token: GIT_TOKEN }),
    });
    hub.repos.syncError = `fetch https://bot:${GIT_TOKEN}@git.example.com failed`;
    const syncFailed = await refusal(
      hub.call("operator", "syncGitRepo", { name: "apps" }),
    );
    // A sync request carries no credentials; a password in a URL is still taken out.
    expect(syncFailed.code).toBe("unavailable");
    expect(syncFailed.message).toBe(
      "fetch https://bot:(redacted)@git.example.com failed",
    );
    const { events } = await hub.audit.list({}, { pageSize: 100 });
    expect(events.length).toBe(4);
    const seen = JSON.stringify([answers, events, syncFailed.message]);
    expect(seen).not.toContain(GIT_TOKEN);
    expect(seen).not.toContain(keyLine);
    expect(seen).not.toContain("b3BlbnNzaC1rZXktdjE");
  });

  it("watch a repository: its status now, then each change, until the caller cancels", async () => {
    await using hub = await serve();
    await hub.call("admin", "addGitRepo", { name: "apps", spec: APPS_SPEC });
    const call = hub.client.watchGitRepo(
      { name: "apps" },
      hub.metadata("viewer"),
    );
    const seen: wire.GitRepo__Output[] = [];
    const ended = new Promise<number>((resolve) => {
      call.on("data", (m: wire.WatchGitRepoResponse__Output) => {
        if (m.repo !== null) seen.push(m.repo);
      });
      call.on("error", (e: ServiceError) => {
        resolve(e.code);
      });
      call.on("end", () => {
        resolve(status.OK);
      });
    });
    await waitFor(() => seen.length === 1);
    expect(seen[0]?.commitDeployed).toBeUndefined();
    await hub.call("operator", "syncGitRepo", { name: "apps" });
    await waitFor(() => seen.length === 2);
    expect(seen[1]?.commitDeployed).toBe("c".repeat(40));
    call.cancel();
    expect(await ended).toBe(status.CANCELLED);
    await waitFor(() => hub.repos.calls.includes("unwatch apps"));

    const missing = hub.client.watchGitRepo(
      { name: "ghost" },
      hub.metadata("viewer"),
    );
    const code = await new Promise<FlotillaError>((resolve) => {
      missing.on("data", () => undefined);
      missing.on("error", (e: ServiceError) => {
        resolve(fromGrpcError(e));
      });
    });
    expect(code.code).toBe("not_found");
  });

  it("answer FAILED_PRECONDITION on a hub without a GitRepo manager, after checking the request", async () => {
    await using hub = await serve(false);
    const error = await refusal(hub.call("viewer", "listGitRepos", {}));
    expect(error.code).toBe("failed_precondition");
    expect(error.message).toMatch(/does not follow git repositories/);
    const bad = await refusal(
      hub.call("admin", "addGitRepo", {
        name: "x",
        spec: { ...APPS_SPEC, pollIntervalSeconds: 3 },
      }),
    );
    expect(bad.code).toBe("invalid_argument");
    const watch = hub.client.watchGitRepo(
      { name: "apps" },
      hub.metadata("viewer"),
    );
    const watchError = await new Promise<FlotillaError>((resolve) => {
      watch.on("data", () => undefined);
      watch.on("error", (e: ServiceError) => {
        resolve(fromGrpcError(e));
      });
    });
    expect(watchError.code).toBe("failed_precondition");
  });
});

describe("a hub given a GitRepo manager", () => {
  it("serves the git repository methods through it, audits them, and ends watches when it stops", async () => {
    const parts = await memoryHubParts(NOW);
    const repos = new MemoryGitRepos();
    const hub = createHub(
      parts.options({ heartbeatIntervalMs: 1_000, gitRepos: repos }),
    );
    const port = await hub.start(
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
    );
    const client = createAdminServiceClient(
      `127.0.0.1:${String(port)}`,
      credentials.createInsecure(),
    );
    try {
      await callUnary(client, "addGitRepo", {
        name: "apps",
        spec: APPS_SPEC,
        credentials: gitCredentialsToWire({ kind: "token", token: GIT_TOKEN }),
      });
      const listed = await callUnary(client, "listGitRepos", {});
      expect(listed.repos.map((r) => r.name)).toEqual(["apps"]);
      const { events } = await parts.audit.list({}, { pageSize: 10 });
      expect(events.map((e) => [e.method, e.targetKind, e.outcome])).toEqual([
        ["/flotilla.v1.AdminService/AddGitRepo", "GitRepo", "Succeeded"],
      ]);
      const watch = client.watchGitRepo({ name: "apps" });
      const ended = new Promise<number>((resolve) => {
        watch.on("data", () => undefined);
        watch.on("error", (e: ServiceError) => {
          resolve(e.code);
        });
      });
      await waitFor(() => repos.calls.includes("watch apps"));
      await hub.stop();
      expect(await ended).toBe(status.UNAVAILABLE);
      await waitFor(() => repos.calls.includes("unwatch apps"));
    } finally {
      client.close();
      await hub.stop();
      await parts.audit.stop();
      await parts.publisher.stop();
      await parts.store.stop();
    }
  });

  it("without one, serves its own manager", async () => {
    const parts = await memoryHubParts(NOW);
    const hub = createHub(parts.options({ heartbeatIntervalMs: 1_000 }));
    const port = await hub.start(
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
    );
    const client = createAdminServiceClient(
      `127.0.0.1:${String(port)}`,
      credentials.createInsecure(),
    );
    try {
      const listed = (await callUnary(client, "listGitRepos", {})) as {
        repos?: unknown[];
      };
      expect(listed.repos ?? []).toEqual([]);
      expect(hub.gitRepos).toBeDefined();
    } finally {
      client.close();
      await hub.stop();
      await parts.audit.stop();
      await parts.publisher.stop();
      await parts.store.stop();
    }
  });
});
