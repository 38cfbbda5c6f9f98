/**
 * PKCS#10 certificate signing requests for any key node:crypto can make (RSA of any size, EC on
 * any curve OpenSSL knows), built in DER by hand and signed with node:crypto. WebCrypto, which
 * security-keys.ts uses as agents and the CLI do, cannot make P-192 or P-224 keys, so the tests of
 * weak keys need this to send what an attacker could send.
 */
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";

/** A DER element: tag, length (short or long form), content. */
function element(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) {
    return Buffer.concat([Buffer.from([tag, length]), content]);
  }
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.concat([
    Buffer.from([tag, 0x80 | bytes.length, ...bytes]),
    content,
  ]);
}

const sequence = (...parts: Buffer[]): Buffer =>
  element(0x30, Buffer.concat(parts));

function objectIdentifier(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let n = arc; ; n = Math.floor(n / 128)) {
      groups.unshift((n % 128) | (groups.length === 0 ? 0 : 0x80));
      if (n < 128) break;
    }
    bytes.push(...groups);
  }
  return element(0x06, Buffer.from(bytes));
}

const SHA256_WITH_RSA = "1.2.840.113549.1.1.11";
const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const COMMON_NAME = "2.5.4.3";

/** The kinds of key {@link weakOrStrongCsr} makes. */
export type CsrKey =
  | { readonly type: "rsa"; readonly bits: number }
  | { readonly type: "ec"; readonly curve: string };

function generate(key: CsrKey): {
  publicKey: KeyObject;
  privateKey: KeyObject;
} {
  return key.type === "rsa"
    ? generateKeyPairSync("rsa", { modulusLength: key.bits })
    : generateKeyPairSync("ec", { namedCurve: key.curve });
}

/** A CSR (PEM) for a new key of `key`'s kind, signed by that key with SHA-256. */
export function csrForKey(key: CsrKey, commonName = "ignored"): string {
  const { publicKey, privateKey } = generate(key);
  const subject = sequence(
    element(
      0x31,
      sequence(
        objectIdentifier(COMMON_NAME),
        element(0x0c, Buffer.from(commonName, "utf8")),
      ),
    ),
  );
  const info = sequence(
    element(0x02, Buffer.from([0])),
    subject,
    publicKey.export({ type: "spki", format: "der" }),
    element(0xa0, Buffer.alloc(0)),
  );
  const algorithm =
    key.type === "rsa"
      ? sequence(
          objectIdentifier(SHA256_WITH_RSA),
          element(0x05, Buffer.alloc(0)),
        )
      : sequence(objectIdentifier(ECDSA_WITH_SHA256));
  const signature = sign("sha256", info, privateKey);
  const der = sequence(
    info,
    algorithm,
    element(0x03, Buffer.concat([Buffer.from([0]), signature])),
  );
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE REQUEST-----\n${lines.join("\n")}\n-----END CERTIFICATE REQUEST-----\n`;
}
