/**
 * The hub's CA: one CA however many hubs start at once; what it issues verifies; what it did not
 * issue, or issued for no single flotilla identity, or that expired, is refused; a CSR must be
 * signed by its own key.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import {
  CA_KEY,
  loadOrCreateCertificateAuthority,
  SECURITY_CA,
} from "../src/security/ca-store.js";
import {
  createCertificateAuthority,
  generateCaMaterial,
} from "../src/security/certificate-authority.js";
import { createCertificateVerifier } from "../src/security/certificate-verifier.js";
import { createMemoryStore } from "../src/store/memory-store.js";
import { newKeyAndCsr, tamperedCsr } from "./security-keys.js";

const HOUR_MS = 3_600_000;

function der(pem: string): Buffer {
  return Buffer.from(x509.PemConverter.decodeFirst(pem));
}

describe("certificate authority", () => {
  it("is created once when several hubs start at the same time, and loaded after", async () => {
    const store = createMemoryStore();
    await store.start();
    const started = await Promise.all(
      [1, 2, 3, 4].map(() => loadOrCreateCertificateAuthority(store)),
    );
    const pems = new Set(started.map((ca) => ca.certificatePem));
    expect(pems.size).toBe(1);
    const later = await loadOrCreateCertificateAuthority(store);
    expect(later.certificatePem).toBe(started[0]?.certificatePem);
    const stored = await store.get(SECURITY_CA, CA_KEY);
    expect(stored?.value.certificatePem).toBe(later.certificatePem);
  });

  it("issues a cluster certificate that verifies as that cluster, whatever the CSR's subject", async () => {
    const ca = await createCertificateAuthority(await generateCaMaterial());
    const { csrPem } = await newKeyAndCsr("CN=someone-else");
    const issued = await ca.issueClientCertificate(
      csrPem,
      { kind: "cluster", cluster: "web-1" },
      HOUR_MS,
    );
    const identity = ca.verify(der(issued.certificatePem));
    expect(identity).toEqual({
      kind: "cluster",
      cluster: "web-1",
      serial: issued.serial,
      expiresAtMs: issued.expiresAtMs,
    });
    const cert = new x509.X509Certificate(issued.certificatePem);
    expect(cert.subject).toBe("CN=web-1");
  });

  it("issues an admin certificate that verifies as that admin and role", async () => {
    const ca = await createCertificateAuthority(await generateCaMaterial());
    const { csrPem } = await newKeyAndCsr();
    const issued = await ca.issueClientCertificate(
      csrPem,
      { kind: "admin", role: "operator", name: "alice@example.com" },
      HOUR_MS,
    );
    expect(ca.verify(der(issued.certificatePem))).toEqual({
      kind: "admin",
      name: "alice@example.com",
      role: "operator",
      via: "certificate",
    });
  });

  it("refuses a certificate issued by another CA", async () => {
    const ours = await createCertificateAuthority(await generateCaMaterial());
    const theirs = await createCertificateAuthority(await generateCaMaterial());
    const { csrPem } = await newKeyAndCsr();
    const foreign = await theirs.issueClientCertificate(
      csrPem,
      { kind: "cluster", cluster: "web-1" },
      HOUR_MS,
    );
    expect(() => ours.verify(der(foreign.certificatePem))).toThrow(
      expect.objectContaining({
        code: "unauthenticated",
        message: expect.stringContaining(
          "not issued by this hub's CA",
        ) as string,
      }),
    );
  });

  it("refuses an expired certificate and accepts it while valid", async () => {
    const material = await generateCaMaterial();
    const ca = await createCertificateAuthority(material);
    const { csrPem } = await newKeyAndCsr();
    const issued = await ca.issueClientCertificate(
      csrPem,
      { kind: "cluster", cluster: "web-1" },
      HOUR_MS,
    );
    const at = (ms: number) =>
      createCertificateVerifier(material.certificatePem, { now: () => ms });
    expect(at(issued.expiresAtMs - 1)(der(issued.certificatePem)).kind).toBe(
      "cluster",
    );
    expect(() =>
      at(issued.expiresAtMs + 1_000)(der(issued.certificatePem)),
    ).toThrow(expect.objectContaining({ code: "unauthenticated" }));
  });

  it("refuses certificates of this CA naming no URI, two URIs, or a foreign URI", async () => {
    const material = await generateCaMaterial();
    const ca = await createCertificateAuthority(material);
    const caCert = new x509.X509Certificate(material.certificatePem);
    const signingKey = await globalThis.crypto.subtle.importKey(
      "pkcs8",
      x509.PemConverter.decodeFirst(material.privateKeyPem),
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    );
    const keys = await globalThis.crypto.subtle.generateKey(
      { name: "ECDSA", namedCurve: "P-256" },
      true,
      ["sign", "verify"],
    );
    const forge = async (uris: string[]) =>
      x509.X509CertificateGenerator.create({
        subject: "CN=forged",
        issuer: caCert.subject,
        notBefore: new Date(Date.now() - HOUR_MS),
        notAfter: new Date(Date.now() + HOUR_MS),
        publicKey: keys.publicKey,
        signingKey,
        signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
        extensions: [
          new x509.ExtendedKeyUsageExtension([
            x509.ExtendedKeyUsage.clientAuth,
          ]),
          new x509.SubjectAlternativeNameExtension(
            uris.map((value) => ({ type: "url" as const, value })),
          ),
        ],
      });
    const control = await forge(["spiffe://flotilla/cluster/web-1"]);
    expect(ca.verify(Buffer.from(control.rawData)).kind).toBe("cluster");
    for (const uris of [
      [],
      ["spiffe://flotilla/cluster/web-1", "spiffe://flotilla/cluster/web-2"],
      ["spiffe://elsewhere/cluster/web-1"],
      ["spiffe://flotilla/admin/root/alice"],
    ]) {
      const forged = await forge(uris);
      expect(() => ca.verify(Buffer.from(forged.rawData))).toThrow(
        expect.objectContaining({ code: "unauthenticated" }),
      );
    }
  });

  it("refuses its own serving certificate as a client identity", async () => {
    const ca = await createCertificateAuthority(await generateCaMaterial());
    const serving = await ca.issueServingCertificate(
      ["localhost", "127.0.0.1"],
      HOUR_MS,
    );
    expect(() => ca.verify(der(serving.certificatePem))).toThrow(
      expect.objectContaining({ code: "unauthenticated" }),
    );
  });

  it("refuses a CSR whose signature does not verify, and one that is not a CSR", async () => {
    const ca = await createCertificateAuthority(await generateCaMaterial());
    const { csrPem } = await newKeyAndCsr();
    const subject = { kind: "cluster", cluster: "web-1" } as const;
    await expect(
      ca.issueClientCertificate(tamperedCsr(csrPem), subject, HOUR_MS),
    ).rejects.toMatchObject({
      code: "invalid_argument",
      problems: [expect.objectContaining({ path: "csrPem" })],
    });
    await expect(
      ca.issueClientCertificate("not a csr", subject, HOUR_MS),
    ).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("refuses an operator CA whose key is not the certificate's", async () => {
    const a = await generateCaMaterial();
    const b = await generateCaMaterial();
    await expect(
      createCertificateAuthority({
        certificatePem: a.certificatePem,
        privateKeyPem: b.privateKeyPem,
      }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
  });
});
