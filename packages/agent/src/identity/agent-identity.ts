/**
 * A cluster's identity as the agent holds it (docs/security.md): its private key, the client
 * certificate the hub's CA signed for it, that CA, and the NATS credentials that let it read its own
 * intent and nothing else. {@link checkIdentity} is the one place that decides whether material is
 * usable: the certificate parses, belongs to the key, names the cluster in its URI SAN
 * (`spiffe://flotilla/cluster/NAME`, the hub's identity.ts) and was signed by the CA.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { FlotillaError, showValue, compact } from "@flotilla/core";

/** URI SAN prefix of a cluster's certificate; the hub's security/identity.ts defines it. */
export const CLUSTER_URI_PREFIX = "spiffe://flotilla/cluster/";

/** Where the agent reads its intents, as registration returned it. */
export interface IdentityNats {
  /** NATS server URLs; empty: use the configured ones. */
  readonly servers: readonly string[];
  /** A `.creds` file's content (user JWT and nkey seed); empty: the NATS server has no auth. */
  readonly creds: string;
  readonly bucket: string;
  readonly key: string;
}

/** A cluster's identity. */
export interface AgentIdentity {
  readonly clusterName: string;
  /** PKCS#8 PEM of the agent's own key; it never leaves the cluster. */
  readonly keyPem: string;
  readonly certificatePem: string;
  /** The hub's CA (PEM). */
  readonly caPem: string;
  /** When the certificate stops being valid (its notAfter), epoch ms. */
  readonly expiresAtMs: number;
  /** Undefined when the hub runs NATS without authorization. */
  readonly nats?: IdentityNats;
}

/** A certificate's validity, epoch ms. */
export interface Validity {
  readonly notBeforeMs: number;
  readonly notAfterMs: number;
}

/** Share of a certificate's lifetime after which the agent renews it. */
export const RENEW_AFTER_FRACTION = 2 / 3;

/** When to renew a certificate valid over `validity`: once 2/3 of its lifetime has passed. */
export function renewAtMs(validity: Validity): number {
  const lifetimeMs = validity.notAfterMs - validity.notBeforeMs;
  return Math.round(validity.notBeforeMs + lifetimeMs * RENEW_AFTER_FRACTION);
}

function parseCertificate(pem: string, what: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (error) {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot read the ${what}: not a PEM X.509 certificate`,
      { cause: error },
    );
  }
}

/** The validity of a PEM certificate; `invalid_argument` if it does not parse. */
export function certificateValidity(pem: string): Validity {
  const certificate = parseCertificate(pem, "client certificate");
  return {
    notBeforeMs: Date.parse(certificate.validFrom),
    notAfterMs: Date.parse(certificate.validTo),
  };
}

/**
 * Checks that `identity` is usable as cluster `clusterName`'s and returns its certificate's
 * validity. Throws `invalid_argument` naming what is wrong; `where` says where the material came
 * from (a directory, "the hub's answer").
 */
export function checkIdentity(
  identity: AgentIdentity,
  clusterName: string,
  where: string,
): Validity {
  const fail = (problem: string, cause?: unknown): never => {
    throw new FlotillaError(
      "invalid_argument",
      `Cannot use the identity of cluster ${showValue(clusterName)} from ${where}: ${problem}`,
      compact({ cause }),
    );
  };
  if (identity.clusterName !== clusterName)
    fail(`it belongs to cluster ${showValue(identity.clusterName)}`);
  const certificate = parseCertificate(
    identity.certificatePem,
    `client certificate from ${where}`,
  );
  const ca = parseCertificate(identity.caPem, `CA certificate from ${where}`);
  let key;
  try {
    key = createPrivateKey(identity.keyPem);
  } catch (error) {
    return fail("the private key is not a PEM private key", error);
  }
  if (!certificate.checkPrivateKey(key))
    fail("the certificate does not belong to the private key");
  const uri = `${CLUSTER_URI_PREFIX}${clusterName}`;
  const sans = (certificate.subjectAltName ?? "")
    .split(",")
    .map((s) => s.trim());
  if (!sans.includes(`URI:${uri}`))
    fail(
      `the certificate does not name ${showValue(uri)} (its subjectAltName is ${showValue(certificate.subjectAltName ?? "")})`,
    );
  if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey))
    fail("the certificate was not signed by the CA that came with it");
  return {
    notBeforeMs: Date.parse(certificate.validFrom),
    notAfterMs: Date.parse(certificate.validTo),
  };
}
