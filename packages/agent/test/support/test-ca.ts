// A certificate authority for the agent's identity tests, made with @peculiar/x509 on Node's
// WebCrypto: a CA, a server certificate for 127.0.0.1, and cluster certificates signed from CSRs
// the way the hub signs them (URI SAN spiffe://flotilla/cluster/NAME, subject from the name, not
// from the request).
import { webcrypto } from "node:crypto";
// Before @peculiar/x509, which needs it at load time.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

const EC = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

type Keys = webcrypto.CryptoKeyPair;

let serials = 1;
const nextSerial = (): string => (0x100000 + serials++).toString(16);

async function keyPair(): Promise<Keys> {
  return webcrypto.subtle.generateKey(EC, true, ["sign", "verify"]);
}

async function keyPem(keys: Keys): Promise<string> {
  return x509.PemConverter.encode(
    await webcrypto.subtle.exportKey("pkcs8", keys.privateKey),
    "PRIVATE KEY",
  );
}

/** Validity of an issued certificate, real time. */
export interface IssueValidity {
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** A test CA. */
export class TestCa {
  private constructor(
    private readonly keys: Keys,
    readonly certificate: x509.X509Certificate,
  ) {}

  static async create(name = "flotilla test CA"): Promise<TestCa> {
    const keys = await keyPair();
    const certificate = await x509.X509CertificateGenerator.createSelfSigned(
      {
        serialNumber: nextSerial(),
        name: `CN=${name}`,
        notBefore: new Date(Date.now() - 3_600_000),
        notAfter: new Date(Date.now() + 86_400_000),
        keys,
        signingAlgorithm: SIGN,
        extensions: [
          new x509.BasicConstraintsExtension(true, undefined, true),
          new x509.KeyUsagesExtension(
            x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
            true,
          ),
        ],
      },
      webcrypto,
    );
    return new TestCa(keys, certificate);
  }

  get pem(): string {
    return this.certificate.toString("pem");
  }

  /** A server key and certificate for 127.0.0.1. */
  async server(): Promise<{ keyPem: string; certificatePem: string }> {
    const keys = await keyPair();
    const certificate = await this.#sign(
      "CN=hub",
      keys.publicKey,
      {
        notBefore: new Date(Date.now() - 60_000),
        notAfter: new Date(Date.now() + 86_400_000),
      },
      [
        new x509.SubjectAlternativeNameExtension([
          { type: "ip", value: "127.0.0.1" },
        ]),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ],
    );
    return {
      keyPem: await keyPem(keys),
      certificatePem: certificate.toString("pem"),
    };
  }

  /** Signs `csrPem` for cluster `cluster`, as the hub does; throws if the CSR's signature is bad. */
  async signCsr(
    csrPem: string,
    cluster: string,
    validity: IssueValidity,
  ): Promise<x509.X509Certificate> {
    const csr = new x509.Pkcs10CertificateRequest(csrPem);
    if (!(await csr.verify(webcrypto))) throw new Error("bad CSR signature");
    return this.#sign(`CN=${cluster}`, csr.publicKey, validity, [
      new x509.SubjectAlternativeNameExtension([
        { type: "url", value: `spiffe://flotilla/cluster/${cluster}` },
      ]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ]);
  }

  /** A key and a certificate for `cluster` without a CSR (for stores and sessions). */
  async cluster(
    cluster: string,
    validity: IssueValidity,
  ): Promise<{ keyPem: string; certificatePem: string }> {
    const keys = await keyPair();
    const certificate = await this.#sign(
      `CN=${cluster}`,
      keys.publicKey,
      validity,
      [
        new x509.SubjectAlternativeNameExtension([
          { type: "url", value: `spiffe://flotilla/cluster/${cluster}` },
        ]),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      ],
    );
    return {
      keyPem: await keyPem(keys),
      certificatePem: certificate.toString("pem"),
    };
  }

  #sign(
    subject: string,
    publicKey: webcrypto.CryptoKey | x509.PublicKey,
    validity: IssueValidity,
    extensions: x509.Extension[],
  ): Promise<x509.X509Certificate> {
    return x509.X509CertificateGenerator.create(
      {
        serialNumber: nextSerial(),
        subject,
        issuer: this.certificate.subject,
        notBefore: validity.notBefore,
        notAfter: validity.notAfter,
        publicKey,
        signingKey: this.keys.privateKey,
        signingAlgorithm: SIGN,
        extensions,
      },
      webcrypto,
    );
  }
}
