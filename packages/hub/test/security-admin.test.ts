/**
 * AdminService's security methods over TLS (issue 6): creating, listing and revoking bootstrap
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
