/**
 * A fresh key and a certificate signing request for it: ECDSA P-256 made with Node's
 * WebCrypto, the PKCS#10 request built by @peculiar/x509. The request names the cluster in its
 * subject (`CN=NAME`) and URI SAN (`spiffe://flotilla/cluster/NAME`); the hub sets both itself
 * anyway, so they are a courtesy. Every registration and every renewal makes a new key.
 */
import { webcrypto } from "node:crypto";
// Before @peculiar/x509, which needs it at load time.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { CLUSTER_URI_PREFIX } from "./agent-identity.js";

/** A new key (PKCS#8 PEM) and a CSR (PEM) for it. */
export interface KeyAndCsr {
  readonly keyPem: string;
  readonly csrPem: string;
}

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256" } as const;

/** Generates a key and a CSR for cluster `clusterName`. */
export async function createKeyAndCsr(clusterName: string): Promise<KeyAndCsr> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, [
    "sign",
    "verify",
  ]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create(
    {
      name: [{ CN: [clusterName] }],
      keys: keys,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [
        new x509.SubjectAlternativeNameExtension([
          { type: "url", value: `${CLUSTER_URI_PREFIX}${clusterName}` },
        ]),
      ],
    },
    webcrypto,
  );
  const pkcs8 = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    keyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY"),
    csrPem: csr.toString("pem"),
  };
}
