/**
 * AdminService's security methods over TLS: creating, listing and revoking bootstrap
 * tokens (only the secret's hash is stored; bad requests name every bad field) and issuing admin
 * certificates that the hub's CA then verifies.
 */
import "reflect-metadata";
import { callUnary } from "@flotilla/protocol";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKENS } from "../src/security/bootstrap-tokens.js";
import { newKeyAndCsr } from "./security-keys.js";
import { startSecureTestHub } from "./security-harness.js";

describe("bootstrap tokens", () => {
  it("shows the secret once, stores only its hash, lists and revokes by id, audited", async () => {
    await using t = await startSecureTestHub();
    const created = await callUnary(t.admin, "createBootstrapToken", {
      ttlSeconds: 3_600,
      maxUses: 3,
      clusterName: "web-1",
      reason: "new cluster",
    });
    const id = created.token?.id ?? "";
    expect(id).toMatch(/^bt-[0-9a-f]{8}$/);
    expect(created.secret).toMatch(
      new RegExp(`^flotilla-bt\\.${id}\\.[A-Za-z0-9_-]{43}$`),
    );
    const stored = await t.store.get(BOOTSTRAP_TOKENS, id);
    expect(JSON.stringify(stored?.value)).not.toContain(
      created.secret.split(".")[2],
    );
    const listed = await callUnary(t.admin, "listBootstrapTokens", {});
    expect(listed.tokens).toMatchObject([
      { id, clusterName: "web-1", maxUses: 3, uses: 0, revoked: false },
    ]);
    const revoked = await callUnary(t.admin, "revokeBootstrapToken", { id });
    expect(revoked.token?.revoked).toBe(true);
    const audit = await t.audit.list({ targetKind: "BootstrapToken" });
    expect(
      audit.events.map((e) => [e.method, e.targetName, e.outcome]),
    ).toEqual([
      ["/flotilla.v1.AdminService/CreateBootstrapToken", id, "Succeeded"],
      ["/flotilla.v1.AdminService/RevokeBootstrapToken", id, "Succeeded"],
    ]);
    for (const record of audit.events) {
      expect(JSON.stringify(record)).not.toContain(created.secret);
    }
  });

  it("refuses a token without a lifetime, one over 30 days, too many uses and a bad cluster name, all at once", async () => {
    await using t = await startSecureTestHub();
    await expect(
      callUnary(t.admin, "createBootstrapToken", {
        ttlSeconds: 0,
        maxUses: 1_000_000,
        clusterName: "Not_A_Label",
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        expect.objectContaining({ path: "ttlSeconds" }),
        expect.objectContaining({ path: "maxUses" }),
        expect.objectContaining({ path: "clusterName" }),
      ],
    });
    await expect(
      callUnary(t.admin, "createBootstrapToken", { ttlSeconds: 31 * 86_400 }),
    ).rejects.toMatchObject({
      problems: [expect.objectContaining({ path: "ttlSeconds" })],
    });
    expect(await t.store.list(BOOTSTRAP_TOKENS)).toEqual([]);
    await expect(
      callUnary(t.admin, "revokeBootstrapToken", { id: "bt-00000000" }),
    ).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("admin certificates", () => {
  it("issues a certificate naming the admin and role, which the hub's CA verifies", async () => {
    await using t = await startSecureTestHub();
    const { csrPem } = await newKeyAndCsr();
    const issued = await callUnary(t.admin, "issueAdminCertificate", {
      name: "ci-pipeline",
      role: "operator",
      csrPem,
      ttlSeconds: 86_400,
    });
    expect(issued.caCertificatePem).toBe(t.authority.certificatePem);
    const der = Buffer.from(
      x509.PemConverter.decodeFirst(issued.certificatePem),
    );
    expect(t.authority.verify(der)).toEqual({
      kind: "admin",
      name: "ci-pipeline",
      role: "operator",
      via: "certificate",
    });
    expect(issued.expiresAtMs).toBeLessThanOrEqual(t.clock.now() + 86_400_000);
  });

  it("refuses a bad name, an unknown role and a lifetime over 365 days", async () => {
    await using t = await startSecureTestHub();
    const { csrPem } = await newKeyAndCsr();
    await expect(
      callUnary(t.admin, "issueAdminCertificate", {
        name: "Alice Smith",
        role: "root",
        csrPem,
        ttlSeconds: 366 * 86_400,
      }),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [
        expect.objectContaining({ path: "name" }),
        expect.objectContaining({ path: "role" }),
        expect.objectContaining({ path: "ttlSeconds" }),
      ],
    });
  });
});

describe("a cluster's certificate on AdminService", () => {
  it("is refused with PERMISSION_DENIED and audited under the cluster it proves, not as anonymous", async () => {
    await using t = await startSecureTestHub({ adminAuth: true });
    const token = await callUnary(t.admin, "createBootstrapToken", {
      ttlSeconds: 3_600,
    });
    const key = await newKeyAndCsr();
    const registered = await callUnary(t.agentClient(), "register", {
      bootstrapToken: token.secret,
      clusterName: "web-1",
      csrPem: key.csrPem,
      agentVersion: "test",
    });
    const cluster = t.adminClient({
      keyPem: key.keyPem,
      certificatePem: registered.identity?.clientCertificatePem ?? "",
    });
    await expect(
      callUnary(cluster, "removeCluster", { name: "web-1", reason: "x" }),
    ).rejects.toMatchObject({
      code: "permission_denied",
      message: 'Cluster "web-1"\'s certificate may not call AdminService',
    });
    const { events } = await t.audit.list({ outcomes: ["Denied"] });
    expect(events).toMatchObject([
      {
        actor: "cluster:web-1",
        role: "agent",
        method: "/flotilla.v1.AdminService/RemoveCluster",
        targetName: "web-1",
        reason: "x",
        errorCode: "permission_denied",
      },
    ]);
    // The admin certificate that made the token is the actor of its record.
    const created = await t.audit.list({ targetKind: "BootstrapToken" });
    expect(created.events.map((e) => [e.actor, e.role])).toEqual([
      ["test-admin", "admin"],
    ]);
  });
});
