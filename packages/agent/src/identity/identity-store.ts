/**
 * Where a cluster's identity is kept between runs: the IdentityStore port and its file adapter,
 * for simulated agents and agents outside Kubernetes, and the parsing both stores share. (Agents
 * in a real cluster keep it in a Kubernetes Secret: secret-identity-store.ts.)
 *
 * The file layout of one cluster's directory:
 *
 *     key.pem (0600)  cert.pem  ca.pem  nats.creds (0600)  identity.json
 *
 * `identity.json` holds `{ clusterName, expiresAtMs, nats: { servers, bucket, key } }`.
 *
 * An identity is never half-written, not even across a crash during a renewal: every save writes
 * all files into a new version directory (temporary name, then renamed), points the symlink `..data`
 * at it with one atomic rename, and only then removes the old version. The files above are symlinks
 * into `..data` (as Kubernetes mounts Secrets), so tools can read them by their plain names.
 */
import { randomBytes } from "node:crypto";
import {
  lstat,
  mkdir,
  open,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  symlink,
} from "node:fs/promises";
import { join } from "node:path";
import { FlotillaError, showValue, compact } from "@flotilla/core";
import { z } from "zod";
import type { AgentIdentity } from "./agent-identity.js";

/** Keeps one cluster's identity. */
export interface IdentityStore {
  /** Where the identity lives, for messages (a directory, a Secret's name). */
  readonly location: string;
  /** The stored identity; undefined when there is none; `failed_precondition` when corrupt. */
  load(): Promise<AgentIdentity | undefined>;
  /** Replaces the stored identity as a whole: a reader sees the old one or the new one. */
  save(identity: AgentIdentity): Promise<void>;
}

/** The names of an identity's parts: files of the file store, keys of the Secret store. */
export const IDENTITY_FILES = {
  key: "key.pem",
  cert: "cert.pem",
  ca: "ca.pem",
  creds: "nats.creds",
  meta: "identity.json",
} as const;
const FILES = IDENTITY_FILES;

/** The name of one part of a stored identity. */
export type IdentityFileName =
  (typeof IDENTITY_FILES)[keyof typeof IDENTITY_FILES];

const DATA_LINK = "..data";
const VERSION_PREFIX = "..v-";

const metaSchema = z.object({
  clusterName: z.string().min(1),
  expiresAtMs: z.number().int().nonnegative(),
  nats: z
    .object({
      servers: z.array(z.string()),
      bucket: z.string(),
      key: z.string(),
    })
    .optional(),
});

/**
 * Rebuilds an identity from its stored parts, read with `read` (which throws its own error when a
 * part is missing). Throws what `corrupt(problem)` makes when identity.json is not valid. Shared
 * by the file and Secret stores, so both accept exactly the same content.
 */
export async function parseStoredIdentity(
  read: (name: IdentityFileName) => string | Promise<string>,
  corrupt: (problem: string, cause?: unknown) => Error,
): Promise<AgentIdentity> {
  const metaText = await read(FILES.meta);
  let metaJson: unknown;
  try {
    metaJson = JSON.parse(metaText);
  } catch (error) {
    throw corrupt(`${FILES.meta} is not JSON`, error);
  }
  const meta = metaSchema.safeParse(metaJson);
  if (!meta.success)
    throw corrupt(
      `${FILES.meta}: ${meta.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
    );
  const [keyPem, certificatePem, caPem, creds] = await Promise.all([
    read(FILES.key),
    read(FILES.cert),
    read(FILES.ca),
    read(FILES.creds),
  ]);
  const { nats } = meta.data;
  return {
    clusterName: meta.data.clusterName,
    keyPem,
    certificatePem,
    caPem,
    expiresAtMs: meta.data.expiresAtMs,
    ...(nats === undefined ? {} : { nats: { ...nats, creds } }),
  };
}

/** The stored parts of `identity` (the inverse of {@link parseStoredIdentity}). */
export function storedIdentityFiles(
  identity: AgentIdentity,
): Record<IdentityFileName, string> {
  const meta = {
    clusterName: identity.clusterName,
    expiresAtMs: identity.expiresAtMs,
    ...(identity.nats === undefined
      ? {}
      : {
          nats: {
            servers: identity.nats.servers,
            bucket: identity.nats.bucket,
            key: identity.nats.key,
          },
        }),
  };
  return {
    [FILES.key]: identity.keyPem,
    [FILES.cert]: identity.certificatePem,
    [FILES.ca]: identity.caPem,
    [FILES.creds]: identity.nats?.creds ?? "",
    [FILES.meta]: `${JSON.stringify(meta, null, 2)}\n`,
  };
}

/** Creates the file store of one cluster's identity in directory `dir` (made 0700 on save). */
export function createFileIdentityStore(dir: string): IdentityStore {
  const corrupt = (problem: string, cause?: unknown): FlotillaError =>
    new FlotillaError(
      "failed_precondition",
      `Cannot load the identity stored in ${showValue(dir)}: ${problem}; remove the directory and register again with a new bootstrap token`,
      compact({ cause }),
    );

  const readData = async (name: string): Promise<string> => {
    try {
      return await readFile(join(dir, DATA_LINK, name), "utf8");
    } catch (error) {
      throw corrupt(`${name} cannot be read`, error);
    }
  };

  return {
    location: dir,

    async load() {
      try {
        await lstat(join(dir, DATA_LINK));
      } catch (error) {
        if ((error as { code?: unknown }).code === "ENOENT") return undefined;
        throw corrupt(`${DATA_LINK} cannot be read`, error);
      }
      return parseStoredIdentity(readData, corrupt);
    },

    async save(identity) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const suffix = `${String(Date.now())}-${randomBytes(4).toString("hex")}`;
      const staging = join(dir, `..tmp-${suffix}`);
      const version = `${VERSION_PREFIX}${suffix}`;
      await mkdir(staging, { mode: 0o700 });
      try {
        const files = storedIdentityFiles(identity);
        for (const name of Object.values(FILES))
          await writeDurably(
            join(staging, name),
            files[name],
            name === FILES.key || name === FILES.creds ? 0o600 : 0o644,
          );
        await rename(staging, join(dir, version));
      } catch (error) {
        await rm(staging, { recursive: true, force: true });
        throw error;
      }
      // The switch: one rename replaces the ..data link.
      const previous = await readlink(join(dir, DATA_LINK)).catch(
        () => undefined,
      );
      const nextLink = join(dir, `..data-${suffix}`);
      await symlink(version, nextLink);
      await rename(nextLink, join(dir, DATA_LINK));
      for (const name of Object.values(FILES)) {
        const path = join(dir, name);
        const exists = await lstat(path).then(
          () => true,
          () => false,
        );
        if (!exists) await symlink(join(DATA_LINK, name), path);
      }
      // Leftovers of the old version and of saves that died half-way.
      for (const entry of await readdir(dir)) {
        if (
          entry !== version &&
          (entry === previous ||
            entry.startsWith(VERSION_PREFIX) ||
            entry.startsWith("..tmp-"))
        )
          await rm(join(dir, entry), { recursive: true, force: true });
      }
    },
  };
}

/** Writes `text` to a new file with `mode` and flushes it to disk before returning. */
async function writeDurably(
  path: string,
  text: string,
  mode: number,
): Promise<void> {
  const handle = await open(path, "wx", mode);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
}
