/**
 * Kubernetes and node-image versions: parsing, ordering and formatting; the list of versions the
 * platform offers (`available`), which channels and per-member upgrade decisions read; and the
 * choices made among those offers (newest image in some regions, a run's Consistent selection).
 */
import { z } from "zod";
import type { Cluster } from "../cluster.js";
import { fail, ok, type Result } from "../result.js";
import { strictObject } from "../schema.js";

/** A Kubernetes version; `patch` is absent for a minor-only version such as "1.30". */
export interface KubernetesVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch?: number;
}

/** Which spellings a field accepts: `full` "1.30.5", `minor` "1.30", or `any` of the two. */
export type VersionForm = "full" | "minor" | "any";

// No leading zeros (as semver), and at most 6 digits so segments stay exact small integers.
const SEGMENT = "(0|[1-9][0-9]{0,5})";
const VERSION = new RegExp(`^v?${SEGMENT}\\.${SEGMENT}(?:\\.${SEGMENT})?$`);

const FORM_HINT: Record<VersionForm, string> = {
  full: 'must be a version like "1.30.5"',
  minor: 'must be a minor version like "1.30"',
  any: 'must be a version like "1.30" or "1.30.5"',
};

/** Parses "1.30.5", "v1.30.5" or (where `form` allows) "1.30"; problems carry an empty path. */
export function parseKubernetesVersion(
  text: string,
  form: VersionForm = "any",
): Result<KubernetesVersion> {
  const match = VERSION.exec(text);
  if (match === null) {
    const message = /^v?[0-9]+\.[0-9]+(\.[0-9]+)?$/.test(text)
      ? `${FORM_HINT[form]} without leading zeros`
      : FORM_HINT[form];
    return fail([{ path: "", message, value: text }]);
  }
  const [, major = "", minor = "", patch] = match;
  if (form === "full" && patch === undefined) {
    return fail([
      {
        path: "",
        message: `${FORM_HINT.full}: the patch number is required`,
        value: text,
      },
    ]);
  }
  if (form === "minor" && patch !== undefined) {
    return fail([
      {
        path: "",
        message: `${FORM_HINT.minor}: "{major}.{minor}" without a patch`,
        value: text,
      },
    ]);
  }
  const version = { major: Number(major), minor: Number(minor) };
  return ok(
    patch === undefined ? version : { ...version, patch: Number(patch) },
  );
}

/** The parsed version, or undefined when `text` is not a version at all (for already-validated data). */
export function kubernetesVersionOf(
  text: string | undefined,
): KubernetesVersion | undefined {
  if (text === undefined) return undefined;
  const parsed = parseKubernetesVersion(text);
  return parsed.ok ? parsed.value : undefined;
}

/** Formats as "1.30.5" (or "1.30" when there is no patch); never with a leading "v". */
export function formatKubernetesVersion(version: KubernetesVersion): string {
  const minor = `${String(version.major)}.${String(version.minor)}`;
  return version.patch === undefined
    ? minor
    : `${minor}.${String(version.patch)}`;
}

/** The "major.minor" of a version, e.g. "1.30". */
export function minorOf(version: KubernetesVersion): string {
  return `${String(version.major)}.${String(version.minor)}`;
}

/**
 * Orders versions. A minor-only version (patch unknown) sorts before every patch of its minor, so a
 * cluster reported as "1.30" is never taken to be at or past "1.30.0".
 */
export function compareKubernetesVersions(
  a: KubernetesVersion,
  b: KubernetesVersion,
): number {
  return (
    a.major - b.major || a.minor - b.minor || (a.patch ?? -1) - (b.patch ?? -1)
  );
}

/**
 * Minor versions from `from` to `to` (1.28 → 1.30 is 2; negative when `to` is older). Across major
 * versions the distance is unknowable, so it is ±Infinity: always "more than one minor".
 */
export function minorDistance(
  from: KubernetesVersion,
  to: KubernetesVersion,
): number {
  if (from.major !== to.major)
    return to.major > from.major ? Infinity : -Infinity;
  return to.minor - from.minor;
}

const NUMERIC = /^[0-9]+$/;

function compareSegments(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) {
    // Compare as integers of any length without floating point: strip zeros, then length, then digits.
    const x = a.replace(/^0+(?=.)/, "");
    const y = b.replace(/^0+(?=.)/, "");
    if (x.length !== y.length) return x.length - y.length;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1; // numbers before words, as in semver
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Orders node-image versions ("202603.01.0", "20348.2582.240916"): split on "." and "-", numeric
 * segments compare as numbers and sort before non-numeric ones, other segments compare byte-wise,
 * and a version that is a prefix of another is older. Equal values spelled differently ("01" vs
 * "1") fall back to byte order so the order is total and every selection is deterministic.
 */
export function compareNodeImageVersions(a: string, b: string): number {
  const left = a.split(/[.-]/);
  const right = b.split(/[.-]/);
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = compareSegments(left[i] ?? "", right[i] ?? "");
    if (order !== 0) return order;
  }
  if (left.length !== right.length) return left.length - right.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A Kubernetes version the platform offers. */
export interface AvailableKubernetesVersion {
  /** Always a full version, normalized without "v". */
  readonly version: string;
  /** A patch of a long-term-support minor (usable past standard support with `longTermSupport`). */
  readonly lts?: boolean;
  /** Preview versions are never chosen by a channel. */
  readonly preview?: boolean;
  /** Only offered in these regions; absent means everywhere. */
  readonly regions?: readonly string[];
  /**
   * Only offered to these clusters (what one cluster's agent reported it can move to, see
   * docs/engine.md#the-version-catalogue); absent means every cluster.
   */
  readonly clusters?: readonly string[];
}

/** A node-image version the platform offers for one image family. */
export interface AvailableNodeImage {
  readonly family: string;
  readonly version: string;
  /** Only offered in these regions; absent means everywhere. */
  readonly regions?: readonly string[];
  /** Only offered to these clusters; absent means every cluster. */
  readonly clusters?: readonly string[];
}

/** Everything the platform offers at one moment (`available:` in scenario and hub input). */
export interface AvailableVersions {
  readonly kubernetes: readonly AvailableKubernetesVersion[];
  readonly nodeImages: readonly AvailableNodeImage[];
}

/**
 * Whether an offer reaches `region` (and, when given, the cluster named `cluster`). A cluster whose
 * region is unknown can rely only on offers without a region restriction: flotilla never assumes a
 * restricted version reaches it. Likewise an offer restricted to some clusters reaches only those,
 * and never a caller that does not name its cluster.
 */
export function isOfferedIn(
  offer: {
    readonly regions?: readonly string[];
    readonly clusters?: readonly string[];
  },
  region: string | undefined,
  cluster?: string,
): boolean {
  if (
    offer.clusters !== undefined &&
    (cluster === undefined || !offer.clusters.includes(cluster))
  )
    return false;
  if (offer.regions === undefined) return true;
  return region !== undefined && offer.regions.includes(region);
}

/**
 * Where a version must reach: a region (undefined when the cluster reports none) and, when it
 * matters, the cluster itself (`cluster` absent: offers restricted to clusters do not count, as for
 * a caller that names no cluster; `null`: the cluster restriction is not looked at).
 */
export interface OfferPlace {
  readonly region: string | undefined;
  readonly cluster?: string | null;
}

function reachesPlace(offer: AvailableNodeImage, place: OfferPlace): boolean {
  if (place.cluster !== null)
    return isOfferedIn(offer, place.region, place.cluster);
  return (
    offer.regions === undefined ||
    (place.region !== undefined && offer.regions.includes(place.region))
  );
}

/**
 * The newest version of `family` that reaches every one of `places` (each may be reached by a
 * different offer of that version), or undefined when there is none.
 */
export function newestNodeImageAt(
  available: AvailableVersions,
  family: string,
  places: readonly OfferPlace[],
): string | undefined {
  const offers = new Map<string, AvailableNodeImage[]>();
  for (const image of available.nodeImages) {
    if (image.family !== family) continue;
    const list = offers.get(image.version);
    if (list === undefined) offers.set(image.version, [image]);
    else list.push(image);
  }
  let best: string | undefined;
  for (const [version, list] of offers) {
    if (!places.every((place) => list.some((o) => reachesPlace(o, place))))
      continue;
    if (best === undefined || compareNodeImageVersions(version, best) > 0)
      best = version;
  }
  return best;
}

/**
 * The newest version of `family` offered in every one of `regions` (one region for Latest, all of a
 * run's regions for Consistent), or undefined when there is none. Offers restricted to some
 * clusters are left out: name the clusters with {@link newestNodeImageAt}.
 */
export function newestNodeImage(
  available: AvailableVersions,
  family: string,
  regions: readonly (string | undefined)[],
): string | undefined {
  return newestNodeImageAt(
    available,
    family,
    regions.map((region) => ({ region })),
  );
}

/** Whether an image family runs Windows nodes (its name contains "Windows", any case). */
export function isWindowsImageFamily(family: string): boolean {
  return family.toLowerCase().includes("windows");
}

/** The Consistent node-image choice of a run: one version per family, and families with none. */
export interface ConsistentNodeImages {
  readonly selected: Readonly<Record<string, string>>;
  /** Families some member uses that have no version offered in every member's region (sorted). */
  readonly missing: readonly string[];
}

/**
 * Picks, at run start, per image family used by any member's node pools, the newest version offered
 * in the regions of ALL members (AKS "latest common": all members of the run, not only those using
 * the family) and, for offers restricted to clusters (a cluster's own catalogue), to every member
 * that has a pool of the family: a cluster never reports images of a family it does not run. A
 * member without a region admits only versions without a region restriction ({@link isOfferedIn}).
 * The result does not depend on the order of `clusters` or `available`.
 */
export function selectConsistentNodeImages(
  clusters: readonly Cluster[],
  available: AvailableVersions,
): ConsistentNodeImages {
  const families = [
    ...new Set(clusters.flatMap((c) => c.nodePools.map((p) => p.imageFamily))),
  ].sort();
  const selected: [string, string][] = [];
  const missing: string[] = [];
  for (const family of families) {
    const places = clusters.map((c): OfferPlace => ({
      region: c.region,
      cluster: c.nodePools.some((p) => p.imageFamily === family)
        ? c.name
        : null,
    }));
    const version = newestNodeImageAt(available, family, places);
    if (version === undefined) missing.push(family);
    else selected.push([family, version]);
  }
  return { selected: Object.fromEntries(selected), missing };
}

const regionsField = z
  .array(z.string().min(1, "must not be empty"))
  .min(1, "must list at least one region (omit the field for everywhere)");

const clustersField = z
  .array(z.string().min(1, "must not be empty"))
  .min(1, "must list at least one cluster (omit the field for every cluster)");

/** A zod string field holding a Kubernetes version of `form`, normalized without "v". */
export function kubernetesVersionField(
  form: VersionForm,
): z.ZodPipe<z.ZodString, z.ZodTransform<string, string>> {
  return z.string().transform((raw, ctx): string => {
    const parsed = parseKubernetesVersion(raw, form);
    if (parsed.ok) return formatKubernetesVersion(parsed.value);
    for (const problem of parsed.problems) {
      ctx.addIssue({ code: "custom", message: problem.message, input: raw });
    }
    return z.NEVER;
  });
}

/** Schema of one Kubernetes offer (`{version, lts?, preview?, regions?}`). */
export const kubernetesOfferField = strictObject({
  version: kubernetesVersionField("full"),
  lts: z.boolean().optional(),
  preview: z.boolean().optional(),
  regions: regionsField.optional(),
  clusters: clustersField.optional(),
});

/** Schema of one node-image offer (`{family, version, regions?}`). */
export const nodeImageOfferField = strictObject({
  family: z.string().min(1, "must not be empty"),
  version: z
    .string()
    .regex(
      /^[0-9A-Za-z]+([.-][0-9A-Za-z]+)*$/,
      'must be a version like "202603.01.0"',
    ),
  regions: regionsField.optional(),
  clusters: clustersField.optional(),
});

function firstDuplicate(
  keys: readonly string[],
): { index: number; first: number } | undefined {
  const seen = new Map<string, number>();
  for (const [index, key] of keys.entries()) {
    const first = seen.get(key);
    if (first !== undefined) return { index, first };
    seen.set(key, index);
  }
  return undefined;
}

/** Schema of the `available` object; a version listed twice is rejected (its regions would clash). */
export const availableVersionsField: z.ZodType<AvailableVersions> =
  strictObject({
    kubernetes: z.array(kubernetesOfferField).optional(),
    nodeImages: z.array(nodeImageOfferField).optional(),
  }).transform((value, ctx): AvailableVersions => {
    const kubernetes = value.kubernetes ?? [];
    const nodeImages = value.nodeImages ?? [];
    const dupVersion = firstDuplicate(kubernetes.map((k) => k.version));
    if (dupVersion !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["kubernetes", dupVersion.index, "version"],
        message: `duplicate version; first listed at kubernetes[${String(dupVersion.first)}]`,
        input: kubernetes[dupVersion.index]?.version,
      });
    }
    const dupImage = firstDuplicate(
      nodeImages.map((n) => `${n.family}\u0000${n.version}`),
    );
    if (dupImage !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["nodeImages", dupImage.index, "version"],
        message: `duplicate image version for this family; first listed at nodeImages[${String(dupImage.first)}]`,
        input: nodeImages[dupImage.index]?.version,
      });
    }
    return { kubernetes, nodeImages };
  });
