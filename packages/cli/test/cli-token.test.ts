/**
 * `flotilla token create|list|revoke` and `flotilla admin-cert issue` against a fake AdminService:
 * the requests sent, the secret printed once, the table, refusals (exit 1 with the hub's message),
 * and the admin certificate's locally generated key, CSR and files.
 */
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { FlotillaError } from "@flotilla/core";
import { describe, expect, it } from "vitest";
import { cliAgainst, startFakeHub } from "./fake-hub.js";
import { memoryIo, NOW_MS } from "./fixtures.js";

const HOUR_MS = 3_600_000;

function bootstrapToken(overrides: Record<string, unknown> = {}) {
  return {
    id: "bt-0a1b2c3d",
    createdAtMs: NOW_MS,
    expiresAtMs: NOW_MS + 24 * HOUR_MS,
    maxUses: 1,
    uses: 0,
    revoked: false,
    createdBy: "token:root",
    ...overrides,
  };
}

describe("token", () => {
  it("create sends the ttl, uses, cluster and reason, and prints the secret once with the id", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateBootstrapToken: (request) => ({
          token: bootstrapToken({
            maxUses: request.maxUses,
            clusterName: request.clusterName ?? undefined,
          }),
          secret: "flotilla-bt.bt-0a1b2c3d.c2VjcmV0",
        }),
      },
    });
    const { code, out, err } = await cliAgainst(hub, [
      "token",
      "create",
      "--ttl",
      "24h",
      "--max-uses",
      "3",
      "--cluster",
      "prod-eu-1",
      "--reason",
      "new cluster",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("CreateBootstrapToken")).toEqual([
      expect.objectContaining({
        ttlSeconds: 86_400,
        maxUses: 3,
        clusterName: "prod-eu-1",
        reason: "new cluster",
      }),
    ]);
    expect(out).toBe(
      [
        "Bootstrap token bt-0a1b2c3d created: 3 uses, expires 2026-03-03T10:00:00Z, cluster prod-eu-1 only.",
        "Secret (shown only now; give it to the agent that is to register):",
        "  flotilla-bt.bt-0a1b2c3d.c2VjcmV0",
        "",
      ].join("\n"),
    );
    expect(out.split("c2VjcmV0").length).toBe(2);
  });

  it("create -o json prints the hub's answer", async () => {
    await using hub = await startFakeHub({
      unary: {
        CreateBootstrapToken: () => ({
          token: bootstrapToken(),
          secret: "s3cret",
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, [
      "token",
      "create",
      "--ttl",
      "1h",
      "-o",
      "json",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({
      secret: "s3cret",
      token: { id: "bt-0a1b2c3d", maxUses: 1 },
    });
    expect(hub.requests("CreateBootstrapToken")[0]).toMatchObject({
      ttlSeconds: 3600,
      maxUses: 1,
    });
  });

  it.each([
    [["--ttl", "soon"], "--ttl"],
    [["--ttl", "1500ms"], "--ttl must be a whole number of seconds"],
    [
      ["--ttl", "1h", "--max-uses", "0"],
      '--max-uses must be a whole number from 1 (got "0")',
    ],
  ])(
    "create refuses %j with exit 2 before calling the hub",
    async (flags, message) => {
      await using hub = await startFakeHub({});
      const { code, err } = await cliAgainst(hub, [
        "token",
        "create",
        ...flags,
      ]);
      expect(code).toBe(2);
      expect(err).toContain(`flotilla: token create: ${message}`);
      expect(hub.calls).toEqual([]);
    },
  );

  it("list shows id, cluster, uses/max, expiry and state", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListBootstrapTokens: () => ({
          tokens: [
            bootstrapToken(),
            bootstrapToken({
              id: "bt-11111111",
              clusterName: "c-1",
              uses: 2,
              maxUses: 2,
            }),
            bootstrapToken({ id: "bt-22222222", revoked: true }),
            bootstrapToken({
              id: "bt-33333333",
              expiresAtMs: NOW_MS - HOUR_MS,
            }),
          ],
        }),
      },
    });
    const { code, out } = await cliAgainst(hub, ["token", "list"]);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "ID           CLUSTER  USES  EXPIRES               STATE    CREATED BY",
        "bt-0a1b2c3d  *         0/1  2026-03-03T10:00:00Z  Active   token:root",
        "bt-11111111  c-1       2/2  2026-03-03T10:00:00Z  Used up  token:root",
        "bt-22222222  *         0/1  2026-03-03T10:00:00Z  Revoked  token:root",
        "bt-33333333  *         0/1  2026-03-02T09:00:00Z  Expired  token:root",
        "",
      ].join("\n"),
    );
  });

  it("revoke sends the id and reason; a refusal prints the hub's message and exits 1", async () => {
    await using hub = await startFakeHub({
      unary: {
        RevokeBootstrapToken: (request) => {
          if (request.id === "bt-0a1b2c3d")
            return { token: bootstrapToken({ revoked: true }) };
          throw new FlotillaError(
            "permission_denied",
            '"token:ops" (role operator) may not call RevokeBootstrapToken: it needs role admin',
          );
        },
      },
    });
    const ok = await cliAgainst(hub, [
      "token",
      "revoke",
      "bt-0a1b2c3d",
      "--reason",
      "leaked",
    ]);
    expect(ok).toEqual({
      code: 0,
      out: "Bootstrap token bt-0a1b2c3d revoked.\n",
      err: "",
    });
    expect(hub.requests("RevokeBootstrapToken")[0]).toMatchObject({
      id: "bt-0a1b2c3d",
      reason: "leaked",
    });
    const denied = await cliAgainst(hub, ["token", "revoke", "bt-other"]);
    expect(denied).toEqual({
      code: 1,
      out: "",
      err: 'flotilla: "token:ops" (role operator) may not call RevokeBootstrapToken: it needs role admin\n',
    });
  });

  it("an UNAUTHENTICATED answer prints the hub's message and exits 1", async () => {
    await using hub = await startFakeHub({
      unary: {
        ListBootstrapTokens: () => {
          throw new FlotillaError(
            "unauthenticated",
            "Cannot authenticate: unknown bearer token",
          );
        },
      },
    });
    expect(await cliAgainst(hub, ["token", "list"])).toEqual({
      code: 1,
      out: "",
      err: "flotilla: Cannot authenticate: unknown bearer token\n",
    });
  });
});

/** The parts of a DER SEQUENCE: each child's bytes (tag and length included). */
function derChildren(der: Buffer): Buffer[] {
  const header = (at: number): { start: number; end: number } => {
    const first = der[at + 1] ?? 0;
    if (first < 0x80) return { start: at + 2, end: at + 2 + first };
    const count = first & 0x7f;
    let length = 0;
    for (let i = 0; i < count; i++)
      length = length * 256 + (der[at + 2 + i] ?? 0);
    return { start: at + 2 + count, end: at + 2 + count + length };
  };
  const outer = header(0);
  const children: Buffer[] = [];
  for (let at = outer.start; at < outer.end;) {
    const { end } = header(at);
    children.push(der.subarray(at, end));
    at = end;
  }
  return children;
}

function csrParts(pem: string): {
  info: Buffer;
  signature: Buffer;
  publicKey: KeyObject;
} {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
  const [info, , bits] = derChildren(der);
  if (info === undefined || bits === undefined) throw new Error("not a CSR");
  const [, , spki] = derChildren(info);
  if (spki === undefined) throw new Error("no public key");
  // BIT STRING: tag, one length byte (a P-256 signature is under 128 bytes), unused bits, DER.
  return {
    info,
    signature: bits.subarray(3),
    publicKey: createPublicKey({ key: spki, format: "der", type: "spki" }),
  };
}

describe("admin-cert issue", () => {
  it("generates a key, sends a CSR signed by it, and writes key.pem 0600, cert.pem and ca.pem", async () => {
    const csrs: string[] = [];
    await using hub = await startFakeHub({
      unary: {
        IssueAdminCertificate: (request) => {
          csrs.push(request.csrPem);
          return {
            certificatePem:
              "-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n",
            caCertificatePem:
              "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n",
            expiresAtMs: NOW_MS + 720 * HOUR_MS,
          };
        },
      },
    });
    const memory = memoryIo();
    const { code, out, err } = await cliAgainst(
      hub,
      [
        "admin-cert",
        "issue",
        "--name",
        "alice",
        "--role",
        "operator",
        "--out",
        "/pki/alice",
        "--reason",
        "on call",
      ],
      memory,
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(hub.requests("IssueAdminCertificate")[0]).toMatchObject({
      name: "alice",
      role: "operator",
      ttlSeconds: 720 * 3600,
      reason: "on call",
    });
    const [csr = ""] = csrs;
    expect(csr).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
    const parts = csrParts(csr);
    expect(verify("sha256", parts.info, parts.publicKey, parts.signature)).toBe(
      true,
    );
    const keyPem = memory.files["/pki/alice/key.pem"] ?? "";
    expect(
      createPublicKey(keyPem).export({ type: "spki", format: "der" }),
    ).toEqual(parts.publicKey.export({ type: "spki", format: "der" }));
    expect(memory.modes["/pki/alice/key.pem"]).toBe(0o600);
    expect(memory.files["/pki/alice/cert.pem"]).toContain("CERT");
    expect(memory.files["/pki/alice/ca.pem"]).toContain("CA");
    expect(out).toContain(
      `  flotilla config set-context alice --hub ${hub.address} --ca /pki/alice/ca.pem --cert /pki/alice/cert.pem --key /pki/alice/key.pem\n`,
    );
    expect(out).not.toContain("PRIVATE KEY");
  });

  it("writes nothing when the hub refuses, and refuses to overwrite a key", async () => {
    await using hub = await startFakeHub({
      unary: {
        IssueAdminCertificate: () => {
          throw new FlotillaError("permission_denied", "it needs role admin");
        },
      },
    });
    const memory = memoryIo();
    const denied = await cliAgainst(
      hub,
      [
        "admin-cert",
        "issue",
        "--name",
        "bob",
        "--role",
        "viewer",
        "--out",
        "/pki/bob",
      ],
      memory,
    );
    expect(denied.code).toBe(1);
    expect(denied.err).toBe("flotilla: it needs role admin\n");
    expect(Object.keys(memory.files)).toEqual([]);
    const existing = await cliAgainst(
      hub,
      [
        "admin-cert",
        "issue",
        "--name",
        "bob",
        "--role",
        "viewer",
        "--out",
        "/pki/bob",
      ],
      memoryIo({ "/pki/bob/key.pem": "old key" }),
    );
    expect(existing.code).toBe(2);
    expect(existing.err).toContain("/pki/bob/key.pem already exists");
    expect(hub.requests("IssueAdminCertificate")).toHaveLength(1);
  });
});
