// The file identity store: a round trip, file permissions, whole-identity replacement that never
// leaves a half-written identity, and clear errors for corrupt or foreign identities.
import {
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import {
  checkIdentity,
  createFileIdentityStore,
  type AgentIdentity,
} from "@flotilla/agent/testing";
import { TestCa } from "./support/test-ca.js";

let root: string;
let dir: string;
let ca: TestCa;
let cases = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "flotilla-identity-store-"));
  ca = await TestCa.create();
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  dir = join(root, `case-${String(++cases)}`, "c1");
});

async function identityFor(
  cluster: string,
  creds = "creds-of-" + cluster,
): Promise<AgentIdentity> {
  const notAfter = new Date(Date.now() + 3_600_000);
  const { keyPem, certificatePem } = await ca.cluster(cluster, {
    notBefore: new Date(Date.now() - 60_000),
    notAfter,
  });
  return {
    clusterName: cluster,
    keyPem,
    certificatePem,
    caPem: ca.pem,
    expiresAtMs: Math.floor(notAfter.getTime() / 1000) * 1000,
    nats: {
      servers: ["nats://127.0.0.1:4222"],
      creds,
      bucket: "flotilla-intents",
      key: cluster,
    },
  };
}

test("a saved identity loads back as it was, and nothing is stored before a save", async () => {
  const store = createFileIdentityStore(dir);
  expect(await store.load()).toBeUndefined();
  const identity = await identityFor("c1");
  await store.save(identity);
  expect(await store.load()).toEqual(identity);
  // Readable by their plain names, as documented.
  expect(await readFile(join(dir, "cert.pem"), "utf8")).toBe(
    identity.certificatePem,
  );
  expect(
    JSON.parse(await readFile(join(dir, "identity.json"), "utf8")),
  ).toEqual({
    clusterName: "c1",
    expiresAtMs: identity.expiresAtMs,
    nats: {
      servers: ["nats://127.0.0.1:4222"],
      bucket: "flotilla-intents",
      key: "c1",
    },
  });
  expect(checkIdentity(identity, "c1", dir).notAfterMs).toBe(
    identity.expiresAtMs,
  );
});

test("an identity without NATS credentials round-trips without them", async () => {
  const store = createFileIdentityStore(dir);
  const withoutNats: AgentIdentity = { ...(await identityFor("c1")) };
  delete (withoutNats as { nats?: unknown }).nats;
  await store.save(withoutNats);
  expect(await store.load()).toEqual(withoutNats);
});

test("the key and the NATS credentials are readable by the owner only, the directory too", async () => {
  const store = createFileIdentityStore(dir);
  await store.save(await identityFor("c1"));
  const mode = async (name: string): Promise<number> =>
    (await lstat(join(dir, "..data", name))).mode & 0o777;
  expect(await mode("key.pem")).toBe(0o600);
  expect(await mode("nats.creds")).toBe(0o600);
  expect((await lstat(dir)).mode & 0o077).toBe(0);
  expect((await lstat(join(dir, "..data/"))).mode & 0o077).toBe(0);
});

test("a save replaces the whole identity and leaves no old version or temporary files behind", async () => {
  const store = createFileIdentityStore(dir);
  await store.save(await identityFor("c1", "first"));
  // A save that died half-way (a crash) leaves a temporary directory: it is never read.
  await mkdir(join(dir, "..tmp-crashed"));
  await writeFile(join(dir, "..tmp-crashed", "key.pem"), "half");
  expect((await store.load())?.nats?.creds).toBe("first");

  const second = await identityFor("c1", "second");
  await store.save(second);
  expect(await store.load()).toEqual(second);
  const entries = (await readdir(dir)).sort();
  expect(entries.filter((e) => e.startsWith(".."))).toHaveLength(2); // ..data and one version
  expect(entries).toEqual(
    expect.arrayContaining([
      "..data",
      "ca.pem",
      "cert.pem",
      "identity.json",
      "key.pem",
      "nats.creds",
    ]),
  );
  expect(entries.some((e) => e.startsWith("..tmp-"))).toBe(false);
});

test("a corrupt identity.json is a clear error naming the directory and the field", async () => {
  const store = createFileIdentityStore(dir);
  await store.save(await identityFor("c1"));
  await writeFile(join(dir, "..data", "identity.json"), "{not json");
  await expect(store.load()).rejects.toThrow(
    `Cannot load the identity stored in "${dir}": identity.json is not JSON`,
  );
  await writeFile(
    join(dir, "..data", "identity.json"),
    JSON.stringify({ clusterName: "c1", expiresAtMs: "soon" }),
  );
  await expect(store.load()).rejects.toMatchObject({
    code: "failed_precondition",
    message: expect.stringContaining("identity.json: expiresAtMs:") as unknown,
  });
});

test("a missing file of the identity is a clear error", async () => {
  const store = createFileIdentityStore(dir);
  await store.save(await identityFor("c1"));
  await rm(join(dir, "..data", "key.pem"));
  await expect(store.load()).rejects.toThrow("key.pem cannot be read");
});

test("an identity is usable only for its own cluster, with its own key and CA", async () => {
  const identity = await identityFor("c1");
  expect(() => checkIdentity(identity, "c2", dir)).toThrow(
    `Cannot use the identity of cluster "c2" from ${dir}: it belongs to cluster "c1"`,
  );
  const other = await identityFor("c1");
  expect(() =>
    checkIdentity({ ...identity, keyPem: other.keyPem }, "c1", dir),
  ).toThrow("the certificate does not belong to the private key");
  const otherCa = await TestCa.create("another CA");
  expect(() =>
    checkIdentity({ ...identity, caPem: otherCa.pem }, "c1", dir),
  ).toThrow("the certificate was not signed by the CA that came with it");
  expect(() =>
    checkIdentity({ ...identity, certificatePem: "garbage" }, "c1", dir),
  ).toThrow("not a PEM X.509 certificate");
});
