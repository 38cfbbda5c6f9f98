/**
 * Which directories of a checkout are bundles, and what their bundles are called
 * (docs/gitops.md#bundle-directories, docs/gitops.md#bundle-names), as Fleet decides both for a
 * GitRepo: under each of the repository's `paths`, every directory with a fleet.yaml is a bundle;
 * a path with no fleet.yaml at its top is a bundle too when it or a subdirectory without a
 * fleet.yaml holds manifests. A bundle's name is the repository's name joined with the
 * directory's path, made a valid name the way Fleet makes a Helm release name of it.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { FLEET_YAML } from "@flotilla/core";

/** Fleet's (and Helm's) longest release name, hence bundle name. */
const MAX_NAME = 53;

const md5Hex = (text: string, length: number): string =>
  createHash("md5").update(text).digest("hex").slice(0, length);

/** `text` cut to `max` characters, the cut marked by a dash and 5 hex digits of its hash. */
function limit(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = max - 6;
  const cut = text.slice(0, keep);
  return cut.endsWith("-")
    ? `${cut}${md5Hex(text, 5)}`
    : `${cut}-${md5Hex(text, 5)}`;
}

const RELEASE_NAME =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * The bundle name of directory `path` (relative, `/`-separated, "." for the top) of repository
 * `repo`: `repo-path-with-dashes`, lower case; a hash suffix keeps names apart that differ only in
 * case or in characters a name cannot hold; at most 53 characters.
 */
export function bundleNameOf(repo: string, path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  const joined = [repo, ...parts].join("/");
  let name = joined.replaceAll("/", "-");
  if (name !== name.toLowerCase() || /[^a-zA-Z0-9-]/.test(name))
    name = `${name}-${md5Hex(name, 8)}`;
  name = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (RELEASE_NAME.test(name) && DNS_LABEL.test(name))
    return limit(name, MAX_NAME);
  return md5Hex(joined, 24);
}

const MANIFEST = /\.(ya?ml)$/i;

async function entries(dir: string) {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

const visible = (name: string): boolean => !name.startsWith(".");

/** Whether `dir` or a subdirectory without a fleet.yaml holds a manifest file. */
async function holdsLooseManifests(dir: string): Promise<boolean> {
  const list = (await entries(dir)).filter((e) => visible(e.name));
  if (list.some((e) => e.isFile() && e.name === FLEET_YAML)) return false;
  for (const e of list) {
    if (e.isFile() && MANIFEST.test(e.name)) return true;
    if (e.isDirectory() && (await holdsLooseManifests(join(dir, e.name))))
      return true;
  }
  return false;
}

/**
 * The bundle directories under `base` (a path of the repository, relative to `root`), as paths
 * relative to `root` ("." for the top), byte order. Symbolic links are never followed.
 */
export async function bundleDirs(
  root: string,
  base: string,
): Promise<string[]> {
  const found: string[] = [];
  const rel = (path: string): string => (path === "" ? "." : path);
  const baseRel = base === "." ? "" : base.replace(/\/+$/, "");
  const top = await entries(join(root, baseRel));
  const topHasFleet = top.some((e) => e.isFile() && e.name === FLEET_YAML);
  if (topHasFleet || (await holdsLooseManifests(join(root, baseRel))))
    found.push(rel(baseRel));
  const walk = async (path: string): Promise<void> => {
    for (const e of await entries(join(root, path))) {
      if (!e.isDirectory() || !visible(e.name)) continue;
      const sub = path === "" ? e.name : `${path}/${e.name}`;
      const list = await entries(join(root, sub));
      if (list.some((f) => f.isFile() && f.name === FLEET_YAML))
        found.push(sub);
      await walk(sub);
    }
  };
  await walk(baseRel);
  return found.sort();
}
