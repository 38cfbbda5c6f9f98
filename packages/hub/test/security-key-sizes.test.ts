/**
 * The keys the hub's CA signs for, over real gRPC with TLS: Register (agents) and
 * IssueAdminCertificate (people and tools) refuse RSA keys below 2048 bits and EC keys on curves
 * below P-256, naming the size or the curve, and count or store nothing; RSA-2048 and P-256 keys
 * get their certificates.
 */
import { callUnary } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKENS } from "../src/security/bootstrap-tokens.js";
import { IDENTITIES } from "../src/security/cluster-identities.js";
import { csrForKey, type CsrKey } from "./security-csr-der.js";
import { startSecureTestHub, type SecureTestHub } from "./security-harness.js";

const WEAK: readonly (readonly [CsrKey, RegExp])[] = [
  [{ type: "rsa", bits: 512 }, /RSA key of 512 bits.*at least 2048/],
  [{ type: "rsa", bits: 1024 }, /RSA key of 1024 bits.*at least 2048/],
  [{ type: "ec", curve: "prime192v1" }, /curve "prime192v1"/],
  [{ type: "ec", curve: "secp224r1" }, /curve "secp224r1"/],
];

const STRONG: readonly CsrKey[] = [
  { type: "rsa", bits: 2048 },
  { type: "ec", curve: "prime256v1" },
];

async function register(t: SecureTestHub, cluster: string, csrPem: string) {
  const token = await callUnary(t.admin, "createBootstrapToken", {
    ttlSeconds: 3_600,
    maxUses: 1,
    reason: "",
  });
  const call = callUnary(t.agentClient(), "register", {
    bootstrapToken: token.secret,
    clusterName: cluster,
    csrPem,
    agentVersion: "test",
  });
  return { tokenId: token.token?.id ?? "", call };
}

describe("key sizes of certificate signing requests", () => {
  it("refuses weak keys at Register, naming the key size or curve, and counts no token use", async () => {
    await using t = await startSecureTestHub();
    for (const [key, message] of WEAK) {
      const { tokenId, call } = await register(t, "web-1", csrForKey(key));
      await expect(call).rejects.toMatchObject({
        code: "invalid_argument",
        message: expect.stringMatching(message) as unknown,
        problems: [expect.objectContaining({ path: "csrPem" })],
      });
      expect((await t.store.get(BOOTSTRAP_TOKENS, tokenId))?.value.uses).toBe(
        0,
      );
    }
    expect(await t.store.list(IDENTITIES)).toEqual([]);
  });

  it("refuses weak keys at IssueAdminCertificate, naming the key size or curve", async () => {
    await using t = await startSecureTestHub();
    for (const [key, message] of WEAK) {
      await expect(
        callUnary(t.admin, "issueAdminCertificate", {
          name: "alice",
          role: "viewer",
          csrPem: csrForKey(key),
          ttlSeconds: 3_600,
        }),
      ).rejects.toMatchObject({
        code: "invalid_argument",
        message: expect.stringMatching(message) as unknown,
        problems: [expect.objectContaining({ path: "csrPem" })],
      });
    }
  });

  it("signs RSA-2048 and P-256 keys at Register and IssueAdminCertificate", async () => {
    await using t = await startSecureTestHub();
    for (const [i, key] of STRONG.entries()) {
      const { call } = await register(t, `web-${String(i)}`, csrForKey(key));
      const registered = await call;
      expect(registered.identity?.clientCertificatePem).toMatch(
        /BEGIN CERTIFICATE/,
      );
      const admin = await callUnary(t.admin, "issueAdminCertificate", {
        name: "alice",
        role: "viewer",
        csrPem: csrForKey(key),
        ttlSeconds: 3_600,
      });
      expect(admin.certificatePem).toMatch(/BEGIN CERTIFICATE/);
    }
  });
});
