/**
 * `helm template` for the chart tests. The helm binary comes from an npm package (the dev
 * dependency @aws-cdk/asset-kubectl-v20 ships helm 3.8 for linux-x64 inside `lib/layer.zip`),
 * extracted once into node_modules/.cache; nothing is downloaded at test time. Rendering starts a
 * process, so these tests belong to the e2e loop.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { inflateRawSync } from "node:zlib";
import { fail, ok, problem, type Result } from "@flotilla/core";
import { parseAllDocuments, stringify } from "yaml";
import { ROOT, isObject } from "./chart-files.js";

const LAYER_ZIP = join(
  ROOT,
  "node_modules",
  "@aws-cdk",
  "asset-kubectl-v20",
  "lib",
  "layer.zip",
);
const HELM_IN_ZIP = "helm/helm";
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "flotilla-helm");
/** The Kubernetes version rendered for (the charts need 1.25 or later). */
const KUBE_VERSION = "1.30.0";

/** One file's bytes out of a zip archive (stored or deflated), read from its central directory. */
function unzipEntry(zip: Buffer, name: string): Buffer {
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error("not a zip archive: no central directory");
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50)
      throw new Error("corrupt zip central directory");
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const entryName = zip.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (entryName !== name) continue;
    const dataStart =
      local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataStart, dataStart + compressed);
    if (method === 0) return Buffer.from(data);
    if (method === 8) return inflateRawSync(data);
    throw new Error(`${name}: zip compression method ${String(method)}`);
  }
  throw new Error(`${name} is not in the archive`);
}

let helmPath: Promise<string> | undefined;

/** The helm binary's path, extracting it on first use. */
export function findHelm(): Promise<string> {
  helmPath ??= (async () => {
    const target = join(CACHE_DIR, "helm");
    if (existsSync(target)) return target;
    if (!existsSync(LAYER_ZIP)) {
      throw new Error(
        `helm: ${LAYER_ZIP} is missing; run pnpm install (dev dependency @aws-cdk/asset-kubectl-v20)`,
      );
    }
    await mkdir(CACHE_DIR, { recursive: true });
    // Written beside the target, then renamed: a parallel worker never runs a half-written file.
    const partial = `${target}.${String(process.pid)}.partial`;
    await writeFile(
      partial,
      unzipEntry(await readFile(LAYER_ZIP), HELM_IN_ZIP),
    );
    await chmod(partial, 0o755);
    await rename(partial, target);
    return target;
  })();
  return helmPath;
}

/** One rendered Kubernetes object. */
export type Manifest = Record<string, unknown> & {
  readonly kind: string;
  readonly metadata: { readonly name: string };
};

/**
 * Renders deploy/helm/`chart` as release `release` in namespace `flotilla-system` with `values`
 * (merged over the chart's own by helm) and `valuesFiles` (paths inside the chart) before them:
 * the objects, or helm's error as the one problem (a `fail` in a template, a schema error).
 */
export async function renderChart(
  chart: string,
  values: Record<string, unknown> = {},
  options: { valuesFiles?: readonly string[]; release?: string } = {},
): Promise<Result<readonly Manifest[]>> {
  const helm = await findHelm();
  const dir = join(ROOT, "deploy", "helm", chart);
  const work = await mkdtemp(join(tmpdir(), "flotilla-helm-"));
  try {
    const valuesFile = join(work, "values.yaml");
    await writeFile(valuesFile, stringify(values));
    const args = [
      "template",
      options.release ?? "flotilla-hub",
      dir,
      "--namespace",
      "flotilla-system",
      "--kube-version",
      KUBE_VERSION,
      ...(options.valuesFiles ?? []).flatMap((file) => [
        "--values",
        join(dir, file),
      ]),
      "--values",
      valuesFile,
    ];
    // helm keeps caches and settings under these; a test leaves nothing in the home directory.
    const env = {
      ...process.env,
      HELM_CACHE_HOME: join(work, "cache"),
      HELM_CONFIG_HOME: join(work, "config"),
      HELM_DATA_HOME: join(work, "data"),
    };
    try {
      const { stdout } = await promisify(execFile)(helm, args, {
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
      const manifests = parseAllDocuments(stdout)
        .map((document) => document.toJS() as unknown)
        .filter(
          (object): object is Manifest =>
            isObject(object) && typeof object.kind === "string",
        );
      return ok(manifests);
    } catch (error) {
      const stderr = (error as { stderr?: unknown }).stderr;
      return fail([
        problem(typeof stderr === "string" ? stderr : String(error)),
      ]);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The one object of `kind` (and `name`, when given) among `manifests`; throws otherwise. */
export function manifestOf(
  manifests: readonly Manifest[],
  kind: string,
  name?: string,
): Manifest {
  const found = manifests.filter(
    (m) => m.kind === kind && (name === undefined || m.metadata.name === name),
  );
  if (found.length !== 1) {
    throw new Error(
      `expected one ${kind}${name === undefined ? "" : ` ${name}`}, found ${String(found.length)}`,
    );
  }
  return found[0] as Manifest;
}
