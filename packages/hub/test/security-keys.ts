/**
 * Keys and certificate signing requests for the security tests, made the way an agent or the CLI
 * makes them: an ECDSA P-256 key that never leaves the caller, and a PKCS#10 request signed by it.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(globalThis.crypto);

const KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGNING = { name: "ECDSA", hash: "SHA-256" } as const;

/** A private key (PKCS#8 PEM) and a CSR (PEM) for it. */
export interface KeyAndCsr {
  readonly keyPem: string;
  readonly csrPem: string;
}

/** A new key and a CSR whose subject is `subject` (the hub ignores it). */
export async function newKeyAndCsr(subject = "CN=ignored"): Promise<KeyAndCsr> {
  const keys = await globalThis.crypto.subtle.generateKey(KEY, true, [
    "sign",
    "verify",
  ]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: SIGNING,
  });
  const pkcs8 = await globalThis.crypto.subtle.exportKey(
    "pkcs8",
    keys.privateKey,
  );
  return {
    keyPem: `${x509.PemConverter.encode(pkcs8, "PRIVATE KEY")}\n`,
    csrPem: csr.toString("pem"),
  };
}

/** `csrPem` with one byte of its signature changed: well-formed, but its signature fails. */
export function tamperedCsr(csrPem: string): string {
  const der = Buffer.from(x509.PemConverter.decodeFirst(csrPem));
  const at = der.length - 2;
  der[at] = (der[at] ?? 0) ^ 0x01;
  return x509.PemConverter.encode(der, "CERTIFICATE REQUEST");
}
