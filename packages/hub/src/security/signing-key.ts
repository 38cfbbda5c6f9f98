/**
 * The CA's private key as WebCrypto signs with it: read from PEM (any form Node reads), ECDSA
 * P-256 or P-384, or RSA. The key's text never reaches an error message.
 */
import { createPrivateKey, type webcrypto } from "node:crypto";
import { FlotillaError, showValue } from "@flotilla/core";

/** Imports the CA's key for signing; the key's text never reaches an error message. */
export async function importSigningKey(privateKeyPem: string): Promise<{
  key: webcrypto.CryptoKey;
  algorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
}> {
  let der: Buffer;
  let type: string | undefined;
  let curve: string | undefined;
  try {
    const key = createPrivateKey(privateKeyPem);
    der = key.export({ type: "pkcs8", format: "der" });
    type = key.asymmetricKeyType;
    curve = key.asymmetricKeyDetails?.namedCurve;
  } catch {
    throw new FlotillaError(
      "invalid_argument",
      "The CA private key is not a readable PEM private key",
    );
  }
  const curves: Record<string, [string, string]> = {
    prime256v1: ["P-256", "SHA-256"],
    secp384r1: ["P-384", "SHA-384"],
  };
  const ec = curve === undefined ? undefined : curves[curve];
  if (type === "ec" && ec !== undefined) {
    const key = await globalThis.crypto.subtle.importKey(
      "pkcs8",
      der,
      { name: "ECDSA", namedCurve: ec[0] },
      false,
      ["sign"],
    );
    return { key, algorithm: { name: "ECDSA", hash: ec[1] } };
  }
  if (type === "rsa") {
    const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const key = await globalThis.crypto.subtle.importKey(
      "pkcs8",
      der,
      algorithm,
      false,
      ["sign"],
    );
    return { key, algorithm };
  }
  throw new FlotillaError(
    "invalid_argument",
    `The CA private key is of an unsupported type ${showValue(`${type ?? "unknown"}${curve === undefined ? "" : ` ${curve}`}`)}: use ECDSA P-256 or P-384, or RSA`,
  );
}
