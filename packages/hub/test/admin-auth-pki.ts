/**
 * Certificates for admin authentication tests, made with @peculiar/x509: a test CA, a serving
 * certificate for 127.0.0.1, and client certificates with one flotilla URI SAN each; plus a
 * certificate verifier over node:crypto that stands in for the hub CA's (it checks the issuer's
 * signature, the validity and the URI SAN), injected as admin-auth's `verifyCertificate`.
 */
import "reflect-metadata";
import { webcrypto, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";
import type { PeerIdentity } from "../src/security/identity.js";
import {
  ADMIN_URI_PREFIX,
  CLUSTER_URI_PREFIX,
  isAdminRole,
} from "../src/security/identity.js";

x509.cryptoProvider.set(webcrypto);

const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const DAY_MS = 86_400_000;

type Keys = Awaited<ReturnType<typeof generateKeys>>;

async function generateKeys(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"]);
}

async function keyPem(keys: Keys): Promise<string> {
  const der = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
  const body = Buffer.from(der).toString("base64");
  return `-----BEGIN PRIVATE KEY-----\n${body.replace(/(.{64})/g, "$1\n")}\n-----END PRIVATE KEY-----\n`;
}

let serial = 1;

/** A certificate and its private key, PEM. */
export interface Issued {
  readonly certPem: string;
  readonly keyPem: string;
}

/** A test CA that signs serving and client certificates. */
export interface TestCa {
  readonly certPem: string;
  serving(ip: string): Promise<Issued>;
  client(
    uri: string,
    options?: { readonly expired?: boolean },
  ): Promise<Issued>;
}

/** Creates a self-signed test CA called `name`. */
export async function createTestCa(name: string): Promise<TestCa> {
  const keys = await generateKeys();
  const now = Date.now();
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: (serial++).toString(16).padStart(2, "0"),
    name: `CN=${name}`,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 1, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
    ],
  });
  const issue = async (
    subject: string,
    extensions: x509.Extension[],
    expired: boolean,
  ): Promise<Issued> => {
    const leaf = await generateKeys();
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: (serial++).toString(16).padStart(2, "0"),
      subject,
      issuer: caCert.subject,
      notBefore: new Date(now - (expired ? 3 : 1) * DAY_MS),
      notAfter: new Date(now + (expired ? -2 : 1) * DAY_MS),
      signingAlgorithm: ALGORITHM,
      publicKey: leaf.publicKey,
      signingKey: keys.privateKey,
      extensions,
    });
    return { certPem: cert.toString("pem"), keyPem: await keyPem(leaf) };
  };
  return {
    certPem: caCert.toString("pem"),
    serving: (ip) =>
      issue(
        "CN=hub",
        [
          new x509.SubjectAlternativeNameExtension([{ type: "ip", value: ip }]),
          new x509.ExtendedKeyUsageExtension([
            x509.ExtendedKeyUsage.serverAuth,
          ]),
        ],
        false,
      ),
    client: (uri, options = {}) =>
      issue(
        "CN=client",
        [
          new x509.SubjectAlternativeNameExtension([
            { type: "url", value: uri },
          ]),
          new x509.ExtendedKeyUsageExtension([
            x509.ExtendedKeyUsage.clientAuth,
          ]),
        ],
        options.expired === true,
      ),
  };
}

/** A verifier of client certificates issued by `caPem`, as admin-auth's `verifyCertificate`. */
export function testVerifier(
  caPem: string,
  now: () => number = Date.now,
): (der: Buffer) => PeerIdentity {
  const ca = new X509Certificate(caPem);
  return (der) => {
    const cert = new X509Certificate(der);
    if (!cert.verify(ca.publicKey)) throw new Error("not issued by the CA");
    const at = now();
    if (at < Date.parse(cert.validFrom) || at > Date.parse(cert.validTo)) {
      throw new Error("outside its validity");
    }
    const uris = (cert.subjectAltName ?? "")
      .split(", ")
      .filter((n) => n.startsWith("URI:"))
      .map((n) => n.slice(4));
    const [uri] = uris;
    if (uri === undefined || uris.length !== 1) {
      throw new Error("needs exactly one URI SAN");
    }
    const expiresAtMs = Date.parse(cert.validTo);
    if (uri.startsWith(CLUSTER_URI_PREFIX)) {
      return {
        kind: "cluster",
        cluster: uri.slice(CLUSTER_URI_PREFIX.length),
        serial: cert.serialNumber,
        expiresAtMs,
      };
    }
    const [role = "", name = ""] = uri
      .slice(ADMIN_URI_PREFIX.length)
      .split("/");
    if (
      !uri.startsWith(ADMIN_URI_PREFIX) ||
      !isAdminRole(role) ||
      name === ""
    ) {
      throw new Error(`not a flotilla identity: ${uri}`);
    }
    return { kind: "admin", name, role, via: "certificate" };
  };
}
