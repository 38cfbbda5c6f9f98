/**
 * Certificate signing requests as the hub accepts them: PEM PKCS#10, bounded in size, for a key
 * strong enough (RSA of at least 2048 bits, EC on P-256 or a larger NIST curve, or EdDSA), and
 * signed by the key they ask a certificate for (proof of possession). Nothing else in a CSR is
 * trusted. Refusals are `invalid_argument` on `csrPem` and never echo the request.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { FlotillaError, compact } from "@flotilla/core";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

/** The longest CSR accepted, in characters of PEM. */
export const MAX_CSR_PEM_LENGTH = 16 * 1024;

/**
 * The smallest RSA modulus signed, in bits: 1024-bit RSA is within reach of a well-funded attacker
 * and NIST has disallowed it for signatures since 2013.
 */
export const MIN_RSA_KEY_BITS = 2048;

/**
 * EC curves signed, by OpenSSL's name: the NIST curves of at least 256 bits, which are also the
 * ones WebCrypto (and so the signature check below) supports.
 */
const ACCEPTED_CURVES: Readonly<Record<string, string>> = {
  prime256v1: "P-256",
  secp384r1: "P-384",
  secp521r1: "P-521",
};

/** Why the key of `spki` (DER) is too weak to sign for; undefined when it is strong enough. */
function weakKeyProblem(spki: ArrayBuffer): string | undefined {
  let key: KeyObject;
  try {
    key = createPublicKey({
      key: Buffer.from(spki),
      format: "der",
      type: "spki",
    });
  } catch {
    return "its public key is of a kind or on a curve the hub cannot read";
  }
  const details = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case "rsa":
    case "rsa-pss": {
      const bits = details.modulusLength ?? 0;
      return bits >= MIN_RSA_KEY_BITS
        ? undefined
        : `its RSA key of ${String(bits)} bits is too weak: at least ${String(MIN_RSA_KEY_BITS)} bits are required`;
    }
    case "ec": {
      const curve = details.namedCurve ?? "unnamed";
      return curve in ACCEPTED_CURVES
        ? undefined
        : `its EC key on curve "${curve}" is not accepted: use P-256, P-384 or P-521`;
    }
    case "ed25519":
    case "ed448":
      return undefined;
    case "dsa":
    case "x25519":
    case "x448":
    case undefined:
      return `its ${key.asymmetricKeyType ?? "unknown"} key is not accepted: use ECDSA P-256 or larger, RSA of at least ${String(MIN_RSA_KEY_BITS)} bits, or Ed25519`;
  }
}

/** Parses and checks a PEM CSR; refuses without echoing it. */
export async function parseCsr(
  csrPem: string,
): Promise<x509.Pkcs10CertificateRequest> {
  const refuse = (message: string, cause?: unknown): FlotillaError =>
    new FlotillaError("invalid_argument", `Invalid csrPem: ${message}`, {
      problems: [{ path: "csrPem", message }],
      ...compact({ cause }),
    });
  if (csrPem.trim() === "")
    throw refuse("a PEM certificate signing request is required");
  if (csrPem.length > MAX_CSR_PEM_LENGTH) {
    throw refuse(
      `is ${String(csrPem.length)} characters long, more than the ${String(MAX_CSR_PEM_LENGTH)} allowed`,
    );
  }
  if (!csrPem.includes("-----BEGIN CERTIFICATE REQUEST-----")) {
    throw refuse(
      "must be PEM, starting with -----BEGIN CERTIFICATE REQUEST-----",
    );
  }
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (error) {
    throw refuse("is not a valid PKCS#10 certificate signing request", error);
  }
  // Before the signature check, which cannot verify small curves and would only say "unsupported".
  const weak = weakKeyProblem(csr.publicKey.rawData);
  if (weak !== undefined) throw refuse(weak);
  let valid: boolean;
  try {
    valid = await csr.verify();
  } catch (error) {
    throw refuse("its key or signature algorithm is not supported", error);
  }
  if (!valid) {
    throw refuse(
      "its signature does not verify: it must be signed by the key it requests a certificate for",
    );
  }
  return csr;
}
