/**
 * A bundle's renderer input files (BundleSpec.files): the files of a chart or a Kustomize
 * directory that are not Kubernetes manifests (docs/architecture.md#a-bundle-end-to-end). Their
 * paths are checked here, the one place that decides what a safe path is, because a renderer
 * writes them into a directory of its own: a path must stay inside it. Renderers get the files
 * as a map (path → bytes) or written into a fresh temporary directory.
 */
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Problem } from "@flotilla/core";
import { MAX_BUNDLE_CONTENT_BYTES, MAX_BUNDLE_FILES } from "@flotilla/protocol";

/** One file: its path in the bundle directory and its bytes. */
export interface BundleFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** Longest path of a file, in characters (a tar header's name and prefix together). */
const MAX_FILE_PATH_LENGTH = 255;

/** Why `path` is not a relative, `/`-separated path inside the bundle directory; undefined if it is. */
export function bundleFilePathProblem(path: string): string | undefined {
  if (path.length > MAX_FILE_PATH_LENGTH)
    return `must be at most ${String(MAX_FILE_PATH_LENGTH)} characters`;
  if (path.includes("\\")) return "must use / between directories, not \\";
  if (path.includes("\0")) return "must not contain a NUL character";
  if (path.startsWith("/")) return "must be relative to the bundle directory";
  const segments = path.split("/");
  if (segments.some((s) => s === ".."))
    return "must stay inside the bundle directory (no ..)";
  if (segments.some((s) => s === "" || s === "."))
    return "must not have empty or . segments";
  return undefined;
}

/**
 * Problems of `files` as a whole (paths at `field`, `bundle.files`): each path's shape, a path
 * that is also a directory of another, the count and the total size.
 */
export function bundleFilesProblems(
  files: readonly BundleFile[],
  field: string,
): Problem[] {
  const problems: Problem[] = [];
  const paths = new Set(files.map((f) => f.path));
  files.forEach((file, i) => {
    const at = `${field}[${String(i)}].path`;
    const bad = bundleFilePathProblem(file.path);
    if (bad !== undefined) {
      problems.push({ path: at, message: bad, value: file.path });
      return;
    }
    const parent = parentIn(file.path, paths);
    if (parent !== undefined)
      problems.push({
        path: at,
        message: `is inside ${parent}, which is a file of the bundle too`,
        value: file.path,
      });
  });
  if (files.length > MAX_BUNDLE_FILES)
    problems.push({
      path: field,
      message: `holds ${String(files.length)} files, more than the ${String(MAX_BUNDLE_FILES)} allowed`,
    });
  const total = files.reduce((sum, f) => sum + f.bytes.byteLength, 0);
  if (total > MAX_BUNDLE_CONTENT_BYTES)
    problems.push({
      path: field,
      message: `files total ${String(total)} bytes, more than the ${String(MAX_BUNDLE_CONTENT_BYTES)} a bundle's content may hold`,
    });
  return problems;
}

/** The first directory of `path` that is itself one of `paths`. */
function parentIn(
  path: string,
  paths: ReadonlySet<string>,
): string | undefined {
  const segments = path.split("/");
  for (let n = 1; n < segments.length; n++) {
    const parent = segments.slice(0, n).join("/");
    if (paths.has(parent)) return parent;
  }
  return undefined;
}

/** The files by path, for a renderer that reads them in memory. */
export function bundleFileMap(
  files: readonly BundleFile[],
): ReadonlyMap<string, Uint8Array> {
  return new Map(files.map((f) => [f.path, f.bytes]));
}

/** A temporary directory holding a bundle's files; `remove()` deletes it with everything in it. */
export interface BundleFilesDir {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * Writes `files` (checked with {@link bundleFilesProblems}) under a new temporary directory,
 * below `subdir` of it when given. The caller removes it when done.
 */
export async function writeBundleFiles(
  files: readonly BundleFile[],
  subdir = "",
): Promise<BundleFilesDir> {
  const path = await mkdtemp(join(tmpdir(), "flotilla-bundle-"));
  const remove = (): Promise<void> =>
    rm(path, { recursive: true, force: true });
  try {
    for (const file of files) {
      const target = join(path, subdir, ...file.path.split("/"));
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, file.bytes);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { path, remove };
}
