/**
 * Admin authentication and roles over real gRPC: every AdminService method called with no
 * credentials, and as a viewer, an operator and an admin (bearer tokens and client certificates),
 * allowed or denied as the role table says, each refusal in the audit log; malformed credentials
 * refused with UNAUTHENTICATED; insecure development mode.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, ServerCredentials, status } from "@grpc/grpc-js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import {
  createAdminAuth,
  MAX_AUTHORIZATION_LENGTH,
  type AdminAuthDeps,
} from "../src/security/admin-auth.js";
import {
  ADMIN_METHOD_ROLES,
  requiredRole,
} from "../src/security/admin-roles.js";
import { loadAdminTokens } from "../src/security/admin-tokens.js";
import {
  ADMIN_ROLES,
  adminUri,
  clusterUri,
  roleAllows,
} from "../src/security/identity.js";
import { createTestCa, testVerifier } from "./admin-auth-pki.js";
import { adminMethods, startAuthTestServer } from "./admin-auth-server.js";

const TOKENS = {
  viewer: "viewer-token-0123456789abcdef",
  operator: "operator-token-0123456789abcdef",
  admin: "admin-token-0123456789abcdef",
} as const;

let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flotilla-admin-auth-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function tokenFile(): Promise<string> {
  const file = join(dir, `tokens-${String(Math.random()).slice(2)}.yaml`);
  await writeFile(
    file,
    ADMIN_ROLES.map(
      (role) =>
        `- name: ${role}-bot\n  role: ${role}\n  token: ${TOKENS[role]}\n`,
    ).join(""),
  );
  return file;
}

async function authDeps(extra: Partial<AdminAuthDeps> = {}) {
  const audit = createMemoryAuditLog();
  await audit.start();
  const errors: unknown[] = [];
  const deps: AdminAuthDeps = {
    audit,
    now: () => Date.parse("2026-12-01T10:00:00Z"),
    onAuditError: (error) => errors.push(error),
    ...extra,
  };
  return { deps, audit, errors };
}

describe("the role table", () => {
  it("gives every AdminService method of the loaded service a role, and names no other", () => {
    expect(Object.keys(ADMIN_METHOD_ROLES).sort()).toEqual(
      Object.keys(adminMethods()).sort(),
    );
    for (const method of Object.keys(adminMethods())) {
      expect(ADMIN_ROLES).toContain(requiredRole(method));
    }
    expect(requiredRole("NoSuchMethod")).toBeUndefined();
    expect(requiredRole("toString")).toBeUndefined();
  });

  it("lets viewers read, operators drive runs, and keeps the fleet, bundles and credentials for admins", () => {
    const byRole = (role: string) =>
      Object.entries(ADMIN_METHOD_ROLES)
        .filter(([, r]) => r === role)
        .map(([m]) => m)
        .sort();
    expect(byRole("operator")).toEqual(
      [
        "AddRelease",
        "ApproveGate",
        "CompleteGate",
        "CreateAutoUpgradeProfile",
        "CreateUpdateRun",
        "DeleteAutoUpgradeProfile",
        "GenerateUpdateRun",
        "PauseBundle",
        "RedeployBundle",
        "ResumeBundle",
        "RollbackBundle",
        "UpdateAutoUpgradeProfile",
        "DeleteUpdateRun",
        "RemoveRelease",
        "RetryUpdateRunMembers",
        "SkipUpdateRunTargets",
        "StartUpdateRun",
        "StopUpdateRun",
        "SyncGitRepo",
      ].sort(),
    );
    for (const method of byRole("viewer")) {
      expect(method).toMatch(/^(List|Get|Watch|PreviewPlan|RenderBundle)/);
    }
    for (const method of [
      "PutObject",
      "RemoveCluster",
      "CreateBootstrapToken",
      "IssueAdminCertificate",
      "CreateUpdateStrategy",
      "ApplyBundle",
      "AddGitRepo",
      "UpdateGitRepo",
      "DeleteGitRepo",
    ]) {
      expect(requiredRole(method)).toBe("admin");
    }
  });
});

describe("bearer tokens", () => {
  it("allows or denies every method for no token, a viewer, an operator and an admin, auditing each refusal", async () => {
    const controller = new AbortController();
    const tokens = await loadAdminTokens({
      file: await tokenFile(),
      logger: pino({ level: "silent" }),
    });
    const { deps, audit, errors } = await authDeps({ tokens });
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      ServerCredentials.createInsecure(),
      credentials.createInsecure(),
    );
    let denied = 0;
    for (const method of Object.keys(adminMethods())) {
      const none = await server.invoke(method);
      expect(none.code, method).toBe(status.UNAUTHENTICATED);
      denied++;
      for (const role of ADMIN_ROLES) {
        const answer = await server.invoke(method, {
          authorization: `Bearer ${TOKENS[role]}`,
        });
        const needed =
          ADMIN_METHOD_ROLES[method as keyof typeof ADMIN_METHOD_ROLES];
        if (roleAllows(role, needed)) {
          expect(answer.code, `${method} as ${role}`).toBe(status.OK);
          expect(server.seen.at(-1)).toEqual({
            method,
            actor: `token:${role}-bot`,
            role,
          });
        } else {
          expect(answer.code, `${method} as ${role}`).toBe(
            status.PERMISSION_DENIED,
          );
          expect(answer.details).toBe(
            `"token:${role}-bot" (role ${role}) may not call ${method}: it needs role ${needed}`,
          );
          denied++;
        }
      }
    }
    const { events } = await audit.list({}, { pageSize: 1000 });
    expect(events).toHaveLength(denied);
    expect(events.every((e) => e.outcome === "Denied")).toBe(true);
    expect(
      events.find(
        (e) =>
          e.method === "/flotilla.v1.AdminService/StartUpdateRun" &&
          e.actor === "token:viewer-bot",
      ),
    ).toMatchObject({
      role: "viewer",
      errorCode: "permission_denied",
      message:
        '"token:viewer-bot" (role viewer) may not call StartUpdateRun: it needs role operator',
    });
    const anonymous = events.find(
      (e) => e.method === "/flotilla.v1.AdminService/ListClusters",
    );
    expect(anonymous?.actor).toMatch(/^anonymous@/);
    expect(anonymous?.errorCode).toBe("unauthenticated");
    expect(errors).toEqual([]);
    controller.abort();
  });

  it.each([
    [
      "a 10 KiB header",
      { authorization: `Bearer ${"a".repeat(10 * 1024)}` },
      `the authorization header is ${String(10 * 1024 + 7)} characters long; at most ${String(MAX_AUTHORIZATION_LENGTH)}`,
    ],
    [
      "Bearer with no token",
      { authorization: "Bearer" },
      'has no token after "Bearer"',
    ],
    [
      "a token with bad characters",
      { authorization: "Bearer abc$def!ghi" },
      "the bearer token has characters a token cannot have",
    ],
    [
      "another scheme",
      { authorization: "Basic dXNlcjpwYXNz" },
      'must be "Bearer TOKEN"',
    ],
    [
      "an unknown token",
      { authorization: "Bearer not-a-known-token-at-all" },
      "unknown bearer token",
    ],
  ])(
    "refuses %s with UNAUTHENTICATED and keeps serving",
    async (_, headers, message) => {
      const tokens = await loadAdminTokens({
        file: await tokenFile(),
        logger: pino({ level: "silent" }),
      });
      const { deps, audit } = await authDeps({ tokens });
      await using server = await startAuthTestServer(
        createAdminAuth(deps),
        ServerCredentials.createInsecure(),
        credentials.createInsecure(),
      );
      const refused = await server.invoke("ListClusters", headers);
      expect(refused.code).toBe(status.UNAUTHENTICATED);
      expect(refused.details).toContain(message);
      const { events } = await audit.list({});
      expect(events).toHaveLength(1);
      expect(events[0]?.outcome).toBe("Denied");
      const good = await server.invoke("ListClusters", {
        authorization: `Bearer ${TOKENS.viewer}`,
      });
      expect(good.code).toBe(status.OK);
    },
  );

  it("refuses a bearer token on a hub without a token file, naming why", async () => {
    const { deps } = await authDeps();
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      ServerCredentials.createInsecure(),
      credentials.createInsecure(),
    );
    const answer = await server.invoke("ListClusters", {
      authorization: `Bearer ${TOKENS.admin}`,
    });
    expect(answer.code).toBe(status.UNAUTHENTICATED);
    expect(answer.details).toContain("accepts no bearer tokens");
  });
});

describe("client certificates", () => {
  async function tlsServer(verifierNow?: () => number) {
    const ca = await createTestCa("flotilla test CA");
    const serving = await ca.serving("127.0.0.1");
    const { deps, audit } = await authDeps({
      verifyCertificate: testVerifier(ca.certPem, verifierNow),
    });
    const client = async (uri: string) => {
      const issued = await ca.client(uri);
      return credentials.createSsl(
        Buffer.from(ca.certPem),
        Buffer.from(issued.keyPem),
        Buffer.from(issued.certPem),
      );
    };
    const serverCredentials = ServerCredentials.createSsl(
      Buffer.from(ca.certPem),
      [
        {
          cert_chain: Buffer.from(serving.certPem),
          private_key: Buffer.from(serving.keyPem),
        },
      ],
      true,
    );
    return { deps, audit, client, serverCredentials };
  }

  it("authenticates an admin certificate as NAME with the certificate's role", async () => {
    const { deps, client, serverCredentials } = await tlsServer();
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      serverCredentials,
      await client(adminUri("operator", "alice")),
    );
    expect((await server.invoke("StartUpdateRun")).code).toBe(status.OK);
    expect(server.seen).toEqual([
      { method: "StartUpdateRun", actor: "alice", role: "operator" },
    ]);
    const denied = await server.invoke("RemoveCluster");
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    expect(denied.details).toBe(
      '"alice" (role operator) may not call RemoveCluster: it needs role admin',
    );
  });

  it("refuses a cluster's certificate with PERMISSION_DENIED, audited", async () => {
    const { deps, audit, client, serverCredentials } = await tlsServer();
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      serverCredentials,
      await client(clusterUri("prod-eu-1")),
    );
    const answer = await server.invoke("ListClusters");
    expect(answer.code).toBe(status.PERMISSION_DENIED);
    expect(answer.details).toBe(
      'Cluster "prod-eu-1"\'s certificate may not call AdminService',
    );
    expect(server.seen).toEqual([]);
    const { events } = await audit.list({});
    expect(events.map((e) => [e.actor, e.outcome, e.errorCode])).toEqual([
      ["cluster:prod-eu-1", "Denied", "permission_denied"],
    ]);
  });

  it("refuses a certificate the verifier rejects with UNAUTHENTICATED", async () => {
    const later = () => Date.now() + 3 * 86_400_000;
    const { deps, client, serverCredentials } = await tlsServer(later);
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      serverCredentials,
      await client(adminUri("admin", "root")),
    );
    const answer = await server.invoke("ListClusters");
    expect(answer.code).toBe(status.UNAUTHENTICATED);
    expect(answer.details).toBe(
      "Cannot authenticate: the client certificate is not valid (outside its validity)",
    );
  });

  it("prefers a bearer token sent with a certificate, and refuses a bad one rather than fall back", async () => {
    const { deps, client, serverCredentials } = await tlsServer();
    const tokens = await loadAdminTokens({
      file: await tokenFile(),
      logger: pino({ level: "silent" }),
    });
    await using server = await startAuthTestServer(
      createAdminAuth({ ...deps, tokens }),
      serverCredentials,
      await client(adminUri("admin", "root")),
    );
    expect(
      (
        await server.invoke("RemoveCluster", {
          authorization: `Bearer ${TOKENS.viewer}`,
        })
      ).code,
    ).toBe(status.PERMISSION_DENIED);
    expect(
      (await server.invoke("RemoveCluster", { authorization: "Bearer" })).code,
    ).toBe(status.UNAUTHENTICATED);
    expect((await server.invoke("RemoveCluster")).code).toBe(status.OK);
  });
});

describe("insecure development mode", () => {
  it("lets everyone in as admin, named by x-flotilla-actor or the peer", async () => {
    const { deps, audit } = await authDeps({ insecure: true });
    await using server = await startAuthTestServer(
      createAdminAuth(deps),
      ServerCredentials.createInsecure(),
      credentials.createInsecure(),
    );
    expect(
      (await server.invoke("RemoveCluster", { "x-flotilla-actor": "dev" }))
        .code,
    ).toBe(status.OK);
    expect((await server.invoke("IssueAdminCertificate")).code).toBe(status.OK);
    expect(server.seen[0]).toEqual({
      method: "RemoveCluster",
      actor: "dev",
      role: "admin",
    });
    expect(server.seen[1]?.actor).toMatch(/^anonymous@/);
    expect((await audit.list({})).events).toEqual([]);
  });
});
