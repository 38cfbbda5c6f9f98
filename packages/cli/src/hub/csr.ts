/**
 * A new ECDSA P-256 key and a PKCS#10 certificate signing request for it, made with node:crypto's
 * WebCrypto and @peculiar/x509. The key never leaves this machine; the hub ignores the CSR's
 * subject and sets the certificate's names itself: the CSR only proves that the caller holds
 * the private key.
 */
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto);

const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const EC_SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

/** A new key pair and a CSR for it. */
export interface KeyAndCsr {
  /** PKCS#8 PEM of the private key. */
  readonly keyPem: string;
  readonly csrPem: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der)
    .toString("base64")
    .replace(/(.{64})/g, "$1\n")
    .trimEnd();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/** Generates an ECDSA P-256 key pair and a CSR for it with subject `CN=commonName`. */
export async function generateKeyAndCsr(
  commonName: string,
): Promise<KeyAndCsr> {
  const keys = await webcrypto.subtle.generateKey(EC_KEY, true, [
    "sign",
    "verify",
  ]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: [{ CN: [commonName] }],
    keys,
    signingAlgorithm: EC_SIGNING,
  });
  return {
    keyPem: pem(
      "PRIVATE KEY",
      await webcrypto.subtle.exportKey("pkcs8", keys.privateKey),
    ),
    csrPem: csr.toString("pem"),
  };
}
