/**
 * Certificate signing requests as the hub accepts them (issue 6): PEM PKCS#10, bounded in size,
 * and signed by the key they ask a certificate for (proof of possession). Nothing else in a CSR
 * is trusted. Refusals are `invalid_argument` on `csrPem` and never echo the request.
 */
import { FlotillaError } from "@flotilla/core";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

/** The longest CSR accepted, in characters of PEM. */
export const MAX_CSR_PEM_LENGTH = 16 * 1024;

/** Parses and checks a PEM CSR; refuses without echoing it. */
export async function parseCsr(
  csrPem: string,
): Promise<x509.Pkcs10CertificateRequest> {
  const refuse = (message: string, cause?: unknown): FlotillaError =>
    new FlotillaError("invalid_argument", `Invalid csrPem: ${message}`, {
      problems: [{ path: "csrPem", message }],
      ...(cause === undefined ? {} : { cause }),
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
