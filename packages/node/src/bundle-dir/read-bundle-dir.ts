/**
 * Reading a bundle directory the way Fleet lays one out: an optional `fleet.yaml` at the top and
 * every other `*.yaml`, `*.yml` and `*.json` file below it (recursively, hidden entries skipped) as
 * a manifest file, in byte order of their paths so the same directory always makes the same
 * bundle. A directory a renderer reads (a Helm chart, a Kustomize directory: core's
 * `bundleRenderer`) gives every file but fleet.yaml as a renderer input file instead, manifests
 * included (the hub renders them: docs/bundles.md). Every problem's path names the file; YAML
 * syntax errors are at `FILE:LINE:COL`. The CLI's `bundle apply` and the hub's git repositories
 * (docs/gitops.md) both read directories with this.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  bundleRenderer,
  compareNames,
  fail,
  FLEET_YAML,
  formatProblem,
  ok,
  parseFleetYaml,
  type BundleDir,
  type FleetYaml,
  type ManifestFile,
  type Problem,
  type Result,
} from "@flotilla/core";
import {
  describeReadError,
  fileProblem,
  parseDocumentText,
  yamlStreamErrors,
} from "./yaml-input.js";

/** How {@link readBundleDir} treats subdirectories. */
export interface ReadBundleDirOptions {
  /**
   * Leave out subdirectories that have a fleet.yaml (each is a bundle of its own, as in a git
   * repository); without it such a file is refused (`bundle apply` reads one bundle).
   */
  readonly skipNestedBundles?: boolean;
}

/** One entry of a directory listing. */
export interface DirEntry {
  readonly name: string;
  readonly kind: "file" | "directory" | "other";
}

/** What reading a bundle directory touches (the CLI passes its CliIo; the hub the file system). */
export interface BundleDirIo {
  /** Reads a UTF-8 file; rejects with the Node.js error (its `code` names the cause). */
  readonly readFile: (path: string) => Promise<string>;
  /** Reads a file's bytes; rejects like {@link readFile}. */
  readonly readBytes: (path: string) => Promise<Uint8Array>;
  /** Lists a directory (not recursively); rejects with the Node.js error (ENOENT, ENOTDIR). */
  readonly readDir: (path: string) => Promise<readonly DirEntry[]>;
}

/** {@link BundleDirIo} over the local file system (symbolic links are "other": never followed). */
export const fileSystemBundleDirIo: BundleDirIo = {
  readFile: (path) => readFile(path, "utf8"),
  readBytes: async (path) => new Uint8Array(await readFile(path)),
  readDir: async (path) =>
    (await readdir(path, { withFileTypes: true })).map((e) => ({
      name: e.name,
      kind: e.isFile() ? "file" : e.isDirectory() ? "directory" : "other",
    })),
};

const HELMIGNORE = ".helmignore";

const MANIFEST_EXTENSIONS = [".yaml", ".yml", ".json"];

const isManifestName = (name: string): boolean =>
  MANIFEST_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext));

/** Relative paths of the manifest files under `dir`, and nested fleet.yaml files (refused). */
async function walk(
  io: BundleDirIo,
  dir: string,
  relative: string,
  found: {
    manifests: string[];
    nested: string[];
    skipNested?: boolean | undefined;
  },
  keep: (name: string) => boolean = isManifestName,
): Promise<void> {
  const entries = await io.readDir(relative === "" ? dir : join(dir, relative));
  // A directory with a fleet.yaml of its own is another bundle (a git repository's layout:
  // docs/gitops.md#bundle-directories), left out of this one when the reader is asked to.
  if (
    relative !== "" &&
    found.skipNested === true &&
    entries.some((e) => e.kind === "file" && e.name === FLEET_YAML)
  )
    return;
  for (const entry of entries) {
    // Hidden entries are skipped, but a chart's .helmignore (helm package honours it on the hub).
    if (entry.name.startsWith(".") && entry.name !== HELMIGNORE) continue;
    const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
    if (entry.kind === "directory") await walk(io, dir, path, found, keep);
    else if (entry.kind !== "file" || !keep(entry.name)) continue;
    else if (path === FLEET_YAML) continue;
    else if (entry.name === FLEET_YAML) found.nested.push(path);
    else found.manifests.push(path);
  }
}

/** fleet.yaml's document as parsed YAML (null: an empty file). */
async function readFleetDoc(
  io: BundleDirIo,
  dir: string,
): Promise<Result<unknown>> {
  const file = join(dir, FLEET_YAML);
  let source: string;
  try {
    source = await io.readFile(file);
  } catch (error) {
    return fail([
      fileProblem(file, `cannot read: ${describeReadError(error)}`),
    ]);
  }
  return parseDocumentText(file, source, { allowEmpty: true });
}

/** Checks fleet.yaml's document with core's parser; problems name the file. */
function checkFleetYaml(dir: string, doc: unknown): Result<FleetYaml> {
  const fleet = parseFleetYaml(doc);
  if (fleet.ok) return fleet;
  const file = join(dir, FLEET_YAML);
  return fail(fleet.problems.map((p) => fileProblem(file, formatProblem(p))));
}

/** Reads and checks bundle directory `dir`; on failure, every problem found. */
export async function readBundleDir(
  io: BundleDirIo,
  dir: string,
  options: ReadBundleDirOptions = {},
): Promise<Result<BundleDir>> {
  let top;
  try {
    top = await io.readDir(dir);
  } catch (error) {
    return fail([
      fileProblem(
        dir,
        `cannot read the bundle directory: ${describeReadError(error)}`,
      ),
    ]);
  }
  const topNames = top.filter((e) => e.kind === "file").map((e) => e.name);
  const hasFleetYaml = topNames.includes(FLEET_YAML);
  const problems: Problem[] = [];
  let doc: unknown = null;
  const read = hasFleetYaml ? await readFleetDoc(io, dir) : ok(null);
  if (read.ok) doc = read.value;
  else problems.push(...read.problems);
  const renderer = bundleRenderer(topNames, doc);
  let fleet: FleetYaml = {};
  const checked = read.ok ? checkFleetYaml(dir, doc) : ok({});
  if (checked.ok) fleet = checked.value;
  else problems.push(...checked.problems);
  if (renderer !== "manifests") {
    const files = await readRendererFiles(io, dir, options);
    if (!files.ok) problems.push(...files.problems);
    if (problems.length > 0 || !files.ok) return fail(problems);
    return ok({ fleet, hasFleetYaml, manifests: [], files: files.value });
  }
  const found = {
    manifests: [] as string[],
    nested: [] as string[],
    skipNested: options.skipNestedBundles,
  };
  await walk(io, dir, "", found);
  for (const path of found.nested)
    problems.push(
      fileProblem(
        join(dir, path),
        "a nested fleet.yaml starts another bundle; apply its directory on its own",
      ),
    );
  const manifests: ManifestFile[] = [];
  for (const path of found.manifests.sort(compareNames)) {
    const file = join(dir, path);
    let content: Uint8Array;
    try {
      content = await io.readBytes(file);
    } catch (error) {
      problems.push(
        fileProblem(file, `cannot read: ${describeReadError(error)}`),
      );
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(content);
    } catch {
      problems.push(fileProblem(file, "is not UTF-8 text"));
      continue;
    }
    problems.push(...yamlStreamErrors(file, text));
    manifests.push({ path, content });
  }
  if (problems.length === 0 && manifests.length === 0)
    problems.push(
      fileProblem(
        dir,
        `no manifest files (*.yaml, *.yml, *.json) besides ${FLEET_YAML}`,
      ),
    );
  if (problems.length > 0) return fail(problems);
  return ok({ fleet, hasFleetYaml, manifests, files: [] });
}

/**
 * Every file under `dir` but the top fleet.yaml (hidden entries skipped), path order: the
 * renderer input files of a directory `bundleRenderer` does not call "manifests".
 */
export async function readRendererFiles(
  io: BundleDirIo,
  dir: string,
  options: ReadBundleDirOptions = {},
): Promise<Result<ManifestFile[]>> {
  const found = {
    manifests: [] as string[],
    nested: [] as string[],
    skipNested: options.skipNestedBundles,
  };
  await walk(io, dir, "", found, () => true);
  const problems: Problem[] = [];
  const files: ManifestFile[] = [];
  for (const path of [...found.manifests, ...found.nested].sort(compareNames)) {
    const file = join(dir, path);
    try {
      files.push({ path, content: await io.readBytes(file) });
    } catch (error) {
      problems.push(
        fileProblem(file, `cannot read: ${describeReadError(error)}`),
      );
    }
  }
  return problems.length > 0 ? fail(problems) : ok(files);
}
