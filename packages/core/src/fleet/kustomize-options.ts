/**
 * fleet.yaml `kustomize:` (docs/bundles.md#kustomize-bundles): `dir`, the directory of the
 * bundle whose kustomization is rendered, for the bundle and per target customization. Only the
 * shape is checked here (a relative path inside the bundle); whether the directory holds a
 * kustomization is the hub's to say, since it has the files.
 */
import { fail, joinPath, ok, type Problem, type Result } from "../result.js";
import { unknownFieldMessage } from "../schema.js";

/** fleet.yaml `kustomize`, validated. */
export interface KustomizeOptions {
  /** The directory, `/`-separated and relative to the bundle's top; "" for the top itself. */
  readonly dir: string;
}

/** The files whose presence makes a directory a kustomization (kustomize's own three names). */
export const KUSTOMIZATION_FILES: readonly string[] = [
  "kustomization.yaml",
  "kustomization.yml",
  "Kustomization",
];

const KUSTOMIZE_KEYS = ["dir"];

/** Why `dir` is not a directory inside the bundle; undefined when it is. */
export function kustomizeDirProblem(dir: string): string | undefined {
  if (dir.includes("\\")) return "must use / between directories, not \\";
  if (dir.includes("\0")) return "must not contain a NUL character";
  if (dir.startsWith("/"))
    return "must be a directory of the bundle, relative to its top, not an absolute path";
  if (/^[a-z][a-z0-9+.-]*:/i.test(dir))
    return "must be a directory of the bundle, not a URL";
  if (dir.split("/").includes(".."))
    return "must stay inside the bundle directory (no ..)";
  return undefined;
}

/** `dir` without `.` segments, empty segments and a trailing `/`: "" for the top. */
export function normalizeKustomizeDir(dir: string): string {
  return dir
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .join("/");
}

/** Parses fleet.yaml `kustomize` (the bundle's or a customization's) at `path`. */
export function parseKustomizeOptions(
  raw: unknown,
  path: string,
): Result<KustomizeOptions> {
  if (raw === null || raw === undefined) return ok({ dir: "" });
  if (typeof raw !== "object" || Array.isArray(raw))
    return fail([
      { path, message: "must be a mapping with the key dir", value: raw },
    ]);
  const problems: Problem[] = [];
  for (const key of Object.keys(raw)) {
    if (!KUSTOMIZE_KEYS.includes(key))
      problems.push({
        path: joinPath(path, key),
        message: unknownFieldMessage(key, KUSTOMIZE_KEYS),
      });
  }
  const dir = (raw as Record<string, unknown>)["dir"] ?? "";
  const at = joinPath(path, "dir");
  if (typeof dir !== "string")
    problems.push({ path: at, message: "must be a string", value: dir });
  else {
    const bad = kustomizeDirProblem(dir);
    if (bad !== undefined)
      problems.push({ path: at, message: bad, value: dir });
  }
  if (problems.length > 0 || typeof dir !== "string") return fail(problems);
  return ok({ dir: normalizeKustomizeDir(dir) });
}

/** The kustomization file of `dir` among `paths` (bundle file paths), if it has one. */
export function kustomizationFileIn(
  dir: string,
  paths: ReadonlySet<string>,
): string | undefined {
  const prefix = dir === "" ? "" : `${dir}/`;
  return KUSTOMIZATION_FILES.map((name) => `${prefix}${name}`).find((p) =>
    paths.has(p),
  );
}
