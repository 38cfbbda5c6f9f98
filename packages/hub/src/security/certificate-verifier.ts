/**
 * Who a client certificate says its holder is. The hub's TLS layer asks for a client
 * certificate but does not require one (Register and bearer-token admin calls share the port), so
 * every handler that relies on a certificate checks it here: signed by the hub's CA (signature
 * checked, not just the issuer name), within its validity, made for client authentication, not a
 * CA, and naming exactly one flotilla identity as a URI SAN (identity.ts). Anything else is
 * `unauthenticated`.
 */
import { X509Certificate } from "node:crypto";
import { FlotillaError, showValue } from "@flotilla/core";
import { intentKeyProblem } from "@flotilla/protocol";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import {
  ADMIN_NAME_PATTERN,
  ADMIN_URI_PREFIX,
  CLUSTER_URI_PREFIX,
  isAdminRole,
  type PeerIdentity,
} from "./identity.js";

/** Checks a DER client certificate and returns who it names; throws `unauthenticated`. */
export type CertificateVerifier = (der: Buffer) => PeerIdentity;

const CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

function refused(message: string): FlotillaError {
  return new FlotillaError(
    "unauthenticated",
    `Client certificate refused: ${message}`,
  );
}

/** The identity a flotilla URI SAN names, or undefined for anything else. */
export function identityFromUri(
  uri: string,
  serial: string,
  expiresAtMs: number,
): PeerIdentity | undefined {
  if (uri.startsWith(CLUSTER_URI_PREFIX)) {
    const cluster = uri.slice(CLUSTER_URI_PREFIX.length);
    if (intentKeyProblem(cluster) !== undefined) return undefined;
    return { kind: "cluster", cluster, serial, expiresAtMs };
  }
  if (uri.startsWith(ADMIN_URI_PREFIX)) {
    const [role, name, ...rest] = uri.slice(ADMIN_URI_PREFIX.length).split("/");
    if (rest.length > 0 || role === undefined || name === undefined) {
      return undefined;
    }
    if (!isAdminRole(role) || !ADMIN_NAME_PATTERN.test(name)) return undefined;
    return { kind: "admin", name, role, via: "certificate" };
  }
  return undefined;
}

/** A verifier for certificates issued by the CA `caPem`; `now` is the clock for validity. */
export function createCertificateVerifier(
  caPem: string,
  options: { readonly now?: () => number } = {},
): CertificateVerifier {
  const now = options.now ?? Date.now;
  const ca = new X509Certificate(caPem);
  return (der) => {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(der);
    } catch {
      throw refused("it is not a readable X.509 certificate");
    }
    const serial = certificate.serialNumber.toLowerCase();
    const named = `certificate ${showValue(serial)}`;
    if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey)) {
      throw refused(`${named} was not issued by this hub's CA`);
    }
    const nowMs = now();
    const fromMs = Date.parse(certificate.validFrom);
    const toMs = Date.parse(certificate.validTo);
    if (!(nowMs >= fromMs && nowMs <= toMs)) {
      throw refused(
        `${named} is valid from ${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()}, not now`,
      );
    }
    if (certificate.ca) throw refused(`${named} is a CA certificate`);
    const purposes = certificate.keyUsage;
    if (!Array.isArray(purposes) || !purposes.includes(CLIENT_AUTH)) {
      throw refused(`${named} is not for client authentication`);
    }
    let uris: string[];
    try {
      const san = new x509.X509Certificate(der).getExtension(
        x509.SubjectAlternativeNameExtension,
      );
      uris = (san?.names.items ?? [])
        .filter((name) => name.type === "url")
        .map((name) => name.value);
    } catch {
      throw refused(`${named} has an unreadable subject alternative name`);
    }
    const [uri] = uris;
    if (uris.length !== 1 || uri === undefined) {
      throw refused(
        `${named} names ${String(uris.length)} URIs; a flotilla certificate names exactly one identity`,
      );
    }
    const identity = identityFromUri(uri, serial, toMs);
    if (identity === undefined) {
      throw refused(
        `${named} names ${showValue(uri)}, not a flotilla identity`,
      );
    }
    return identity;
  };
}
