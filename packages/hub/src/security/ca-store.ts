/**
 * Where the hub's CA comes from: the operator's PEM files (then nothing is stored), or
 * the state store ("security" collection, key "ca"), created on the first start. Hubs that start
 * at the same time race with a compare-and-set create: one CA wins, every hub loads the winner.
 */
import { z } from "zod";
import { loadOrCreate } from "../store/load-or-create.js";
import {
  defineCollection,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";
import {
  createCertificateAuthority,
  generateCaMaterial,
  type CaMaterial,
  type CertificateAuthority,
  type CertificateAuthorityOptions,
} from "./certificate-authority.js";

/** The stored CA: certificate and PKCS#8 private key, PEM. */
export interface StoredCa extends CaMaterial {
  readonly createdAtMs: number;
}

const storedCaSchema = z.object({
  certificatePem: z.string().min(1),
  privateKeyPem: z.string().min(1),
  createdAtMs: z.number(),
});

/** The "security" collection's documents this module owns. */
export const SECURITY_CA = defineCollection<StoredCa>("security", (value) =>
  storedCaSchema.parse(value),
);

/** The key of the CA in {@link SECURITY_CA}. */
export const CA_KEY = "ca";

/**
 * The stored CA, or a new one stored now when there is none. Two hubs starting at once end with
 * the same CA: the loser of the create loads the winner's.
 */
export async function loadOrCreateCertificateAuthority(
  store: StateStore,
  options: CertificateAuthorityOptions & OperationOptions = {},
): Promise<CertificateAuthority> {
  const stored = await loadOrCreate(
    store,
    SECURITY_CA,
    CA_KEY,
    async () => ({
      ...(await generateCaMaterial(options)),
      createdAtMs: (options.now ?? Date.now)(),
    }),
    { signal: options.signal, what: "Cannot load the hub's CA" },
  );
  return createCertificateAuthority(stored, options);
}
