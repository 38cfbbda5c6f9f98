/**
 * The hub's certificate authority: it signs agents' and admins' client certificates
 * from their certificate signing requests, and the hub's own serving certificate. Keys are made
 * and used through @peculiar/x509 over Node's WebCrypto; a CA made by the hub is ECDSA P-256.
 *
 * A client certificate names exactly one identity, as one URI SAN of identity.ts; the CSR only
 * proves possession of the key (its signature is checked) and nothing else in it is trusted: the
 * subject, SANs and extensions are the hub's. The CA's private key never appears in a message,
 * a log line or an error.
 */
import {
  createPrivateKey,
  createPublicKey,
  randomBytes,
  type webcrypto,
} from "node:crypto";
import { isIP } from "node:net";
import { FlotillaError, showValue } from "@flotilla/core";
import { parseCsr } from "./csr.js";
import { importSigningKey } from "./signing-key.js";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import {
  createCertificateVerifier,
  type CertificateVerifier,
} from "./certificate-verifier.js";
import { adminUri, clusterUri, type AdminRole } from "./identity.js";

x509.cryptoProvider.set(globalThis.crypto);

/** ECDSA P-256 with SHA-256: the hub's keys and signatures. */
const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const EC_SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

/** Client and serving certificates are valid from this long ago, for clocks a little behind. */
export const CLOCK_SKEW_MS = 5 * 60_000;

/** A CA the hub creates is valid this long (10 years). */
export const CA_VALIDITY_MS = 10 * 365 * 24 * 3_600_000;

/** Whom a client certificate names: a cluster's agent, or an admin with a role. */
export type CertificateSubject =
  | { readonly kind: "cluster"; readonly cluster: string }
  | { readonly kind: "admin"; readonly role: AdminRole; readonly name: string };

/** A certificate the CA signed. */
export interface IssuedCertificate {
  readonly certificatePem: string;
  /** Serial number, lower-case hex. */
  readonly serial: string;
  readonly expiresAtMs: number;
}

/** A serving certificate with its new private key (PKCS#8 PEM). */
export interface ServingCertificate extends IssuedCertificate {
  readonly privateKeyPem: string;
}

/** The CA's certificate and private key, both PEM (the key PKCS#8). */
export interface CaMaterial {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

export interface CertificateAuthority {
  /** The CA certificate, for peers to trust. */
  readonly certificatePem: string;
  /** Checks client certificates against this CA (see certificate-verifier.ts). */
  readonly verify: CertificateVerifier;
  /**
   * Signs a client certificate for `subject` with the key of `csrPem`, valid for `ttlMs`.
   * `invalid_argument` (path `csrPem`) for a CSR that does not parse or whose signature fails.
   */
  issueClientCertificate(
    csrPem: string,
    subject: CertificateSubject,
    ttlMs: number,
  ): Promise<IssuedCertificate>;
  /** A new key and a serving certificate (serverAuth) for DNS names and IP addresses `names`. */
  issueServingCertificate(
    names: readonly string[],
    ttlMs: number,
  ): Promise<ServingCertificate>;
}

export interface CertificateAuthorityOptions {
  readonly now?: () => number;
}

/** A random positive serial of 16 bytes, lower-case hex (RFC 5280 allows up to 20). */
function randomSerial(): string {
  const bytes = randomBytes(16);
  // Positive, and no leading zero byte, so the hex reads back the same from any parser.
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x40;
  return bytes.toString("hex");
}

function toPem(der: ArrayBuffer, label: string): string {
  return `${x509.PemConverter.encode(der, label)}\n`;
}

function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new FlotillaError(
      "invalid_argument",
      `Invalid certificate lifetime ${showValue(ttlMs)} ms: it must be a positive whole number`,
    );
  }
}

/** Generates a new self-signed CA (ECDSA P-256, {@link CA_VALIDITY_MS}). */
export async function generateCaMaterial(
  options: CertificateAuthorityOptions = {},
): Promise<CaMaterial> {
  const nowMs = (options.now ?? Date.now)();
  const keys = await globalThis.crypto.subtle.generateKey(EC_KEY, true, [
    "sign",
    "verify",
  ]);
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: [{ CN: ["flotilla hub CA"] }, { O: ["flotilla"] }],
    notBefore: new Date(nowMs - CLOCK_SKEW_MS),
    notAfter: new Date(nowMs + CA_VALIDITY_MS),
    signingAlgorithm: EC_SIGNING,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = await globalThis.crypto.subtle.exportKey(
    "pkcs8",
    keys.privateKey,
  );
  return {
    certificatePem: `${certificate.toString("pem")}\n`,
    privateKeyPem: toPem(pkcs8, "PRIVATE KEY"),
  };
}

/**
 * A CA from its certificate and key (generated, stored, or the operator's PEM files).
 * `invalid_argument` when the certificate is no CA or the key is not its key.
 */
export async function createCertificateAuthority(
  material: CaMaterial,
  options: CertificateAuthorityOptions = {},
): Promise<CertificateAuthority> {
  const now = options.now ?? Date.now;
  let caCert: x509.X509Certificate;
  try {
    caCert = new x509.X509Certificate(material.certificatePem);
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      "The CA certificate is not a readable PEM X.509 certificate",
      { cause: error },
    );
  }
  const constraints = caCert.getExtension(x509.BasicConstraintsExtension);
  if (constraints?.ca !== true) {
    throw new FlotillaError(
      "invalid_argument",
      `The CA certificate ${showValue(caCert.subject)} is not a CA certificate (basic constraints CA:TRUE)`,
    );
  }
  const signing = await importSigningKey(material.privateKeyPem);
  const fromKey = createPublicKey(createPrivateKey(material.privateKeyPem))
    .export({ type: "spki", format: "der" })
    .toString("base64");
  const fromCert = Buffer.from(caCert.publicKey.rawData).toString("base64");
  if (fromKey !== fromCert) {
    throw new FlotillaError(
      "invalid_argument",
      `The CA private key does not belong to the CA certificate ${showValue(caCert.subject)}`,
    );
  }
  const authorityKeyId = await x509.AuthorityKeyIdentifierExtension.create(
    caCert.publicKey,
  );

  const sign = async (
    publicKey: x509.PublicKey | webcrypto.CryptoKey,
    subject: x509.JsonName,
    ttlMs: number,
    extensions: x509.Extension[],
  ): Promise<IssuedCertificate & { certificate: x509.X509Certificate }> => {
    checkTtl(ttlMs);
    const nowMs = now();
    const serial = randomSerial();
    const notAfterMs = Math.min(nowMs + ttlMs, caCert.notAfter.getTime());
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: serial,
      subject,
      issuer: caCert.subjectName,
      notBefore: new Date(nowMs - CLOCK_SKEW_MS),
      notAfter: new Date(notAfterMs),
      signingAlgorithm: signing.algorithm,
      publicKey,
      signingKey: signing.key,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        authorityKeyId,
        await x509.SubjectKeyIdentifierExtension.create(publicKey),
        ...extensions,
      ],
    });
    return {
      certificate,
      certificatePem: `${certificate.toString("pem")}\n`,
      serial,
      // X.509 keeps whole seconds.
      expiresAtMs: certificate.notAfter.getTime(),
    };
  };

  return {
    certificatePem: material.certificatePem,
    verify: createCertificateVerifier(material.certificatePem, { now }),

    async issueClientCertificate(csrPem, subject, ttlMs) {
      const csr = await parseCsr(csrPem);
      const [uri, commonName] =
        subject.kind === "cluster"
          ? [clusterUri(subject.cluster), subject.cluster]
          : [adminUri(subject.role, subject.name), subject.name];
      const issued = await sign(csr.publicKey, [{ CN: [commonName] }], ttlMs, [
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: "url", value: uri }]),
      ]);
      return {
        certificatePem: issued.certificatePem,
        serial: issued.serial,
        expiresAtMs: issued.expiresAtMs,
      };
    },

    async issueServingCertificate(names, ttlMs) {
      if (names.length === 0) {
        throw new FlotillaError(
          "invalid_argument",
          "A serving certificate needs at least one DNS name or IP address",
        );
      }
      const keys = await globalThis.crypto.subtle.generateKey(EC_KEY, true, [
        "sign",
        "verify",
      ]);
      const issued = await sign(
        keys.publicKey,
        [{ CN: [names[0] ?? ""] }],
        ttlMs,
        [
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.digitalSignature,
            true,
          ),
          new x509.ExtendedKeyUsageExtension([
            x509.ExtendedKeyUsage.serverAuth,
          ]),
          new x509.SubjectAlternativeNameExtension(
            names.map((name) => ({
              type: isIP(name) === 0 ? ("dns" as const) : ("ip" as const),
              value: name,
            })),
          ),
        ],
      );
      const pkcs8 = await globalThis.crypto.subtle.exportKey(
        "pkcs8",
        keys.privateKey,
      );
      return {
        certificatePem: issued.certificatePem,
        serial: issued.serial,
        expiresAtMs: issued.expiresAtMs,
        privateKeyPem: toPem(pkcs8, "PRIVATE KEY"),
      };
    },
  };
}
