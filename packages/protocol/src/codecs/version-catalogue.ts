/**
 * A cluster's version catalogue on the wire (docs/engine.md#the-version-catalogue): the Kubernetes
 * versions it can upgrade to, and per node pool the node-image versions it can move to. Decoding
 * first checks the bounds (an implausible catalogue: too many versions, too long strings), then the
 * shape and syntax (a malformed one), so the hub can count each kind of refusal on its own.
 */
import {
  fail,
  formatKubernetesVersion,
  joinPath,
  ok,
  parseKubernetesVersion,
  type Problem,
  type Result,
} from "@flotilla/core";
import { z } from "zod";
import type * as wire from "../generated/index.js";
import {
  MAX_CATALOGUE_IMAGE_VERSIONS,
  MAX_CATALOGUE_KUBERNETES_VERSIONS,
  MAX_NODE_POOLS,
  MAX_VERSION_LENGTH,
} from "../limits.js";
import { boundedString, parseWire } from "./validate.js";

/** One Kubernetes version a cluster can upgrade to. */
export interface KubernetesOffer {
  /** A full version, normalized without "v" ("1.31.2"). */
  readonly version: string;
  readonly lts?: true;
  readonly preview?: true;
}

/** The node-image versions one node pool can move to. */
export interface PoolImageOffers {
  readonly pool: string;
  readonly imageVersions: readonly string[];
}

/** What one cluster can move to, as its agent reports it. */
export interface VersionCatalogue {
  readonly kubernetes: readonly KubernetesOffer[];
  readonly nodePools: readonly PoolImageOffers[];
}

/** Why a catalogue was refused: out of bounds (`implausible`) or not well-formed (`malformed`). */
export type CatalogueRefusal = "implausible" | "malformed";

/** A decoded catalogue, or why it was refused with the problems (field paths from `path`). */
export type CatalogueDecoding =
  | { readonly ok: true; readonly value: VersionCatalogue }
  | {
      readonly ok: false;
      readonly reason: CatalogueRefusal;
      readonly problems: readonly Problem[];
    };

/** A node-image version: segments of letters and digits joined by "." or "-" ("202603.01.0"). */
export const NODE_IMAGE_VERSION = /^[0-9A-Za-z]+([.-][0-9A-Za-z]+)*$/;

/** Encodes a catalogue. */
export function versionCatalogueToWire(
  catalogue: VersionCatalogue,
): wire.VersionCatalogue {
  return {
    kubernetes: catalogue.kubernetes.map((k) => ({
      version: k.version,
      lts: k.lts === true,
      preview: k.preview === true,
    })),
    nodePools: catalogue.nodePools.map((p) => ({
      pool: p.pool,
      imageVersions: [...p.imageVersions],
    })),
  };
}

const text = z.unknown();
const boundsSchema = z.object({
  kubernetes: z
    .array(z.object({ version: text }))
    .max(
      MAX_CATALOGUE_KUBERNETES_VERSIONS,
      `must have at most ${String(MAX_CATALOGUE_KUBERNETES_VERSIONS)} versions`,
    ),
  nodePools: z
    .array(
      z.object({
        pool: text,
        imageVersions: z
          .array(text)
          .max(
            MAX_CATALOGUE_IMAGE_VERSIONS,
            `must have at most ${String(MAX_CATALOGUE_IMAGE_VERSIONS)} versions`,
          ),
      }),
    )
    .max(MAX_NODE_POOLS, `must have at most ${String(MAX_NODE_POOLS)} items`),
});

const versionString = boundedString(MAX_VERSION_LENGTH, 1);

/** String fields longer than MAX_VERSION_LENGTH, with their paths (the value is shortened). */
function longStrings(
  raw: z.output<typeof boundsSchema>,
  path: string,
): Problem[] {
  const problems: Problem[] = [];
  const check = (value: unknown, at: string): void => {
    if (typeof value === "string" && value.length > MAX_VERSION_LENGTH)
      problems.push({
        path: at,
        message: `must be at most ${String(MAX_VERSION_LENGTH)} characters (has ${String(value.length)})`,
        value: `${value.slice(0, 20)}…`,
      });
  };
  raw.kubernetes.forEach((k, i) => {
    check(
      k.version,
      joinPath(joinPath(joinPath(path, "kubernetes"), i), "version"),
    );
  });
  raw.nodePools.forEach((p, i) => {
    const at = joinPath(joinPath(path, "nodePools"), i);
    check(p.pool, joinPath(at, "pool"));
    p.imageVersions.forEach((v, j) => {
      check(v, joinPath(joinPath(at, "imageVersions"), j));
    });
  });
  return problems.slice(0, 20);
}

const shapeSchema = z.object({
  kubernetes: z.array(
    z.object({
      version: versionString.transform((raw, ctx): string => {
        const parsed = parseKubernetesVersion(raw, "full");
        if (parsed.ok) return formatKubernetesVersion(parsed.value);
        for (const p of parsed.problems)
          ctx.addIssue({ code: "custom", message: p.message, input: raw });
        return z.NEVER;
      }),
      lts: z.boolean().nullish(),
      preview: z.boolean().nullish(),
    }),
  ),
  nodePools: z.array(
    z.object({
      pool: versionString,
      imageVersions: z.array(
        versionString.regex(
          NODE_IMAGE_VERSION,
          'must be a node-image version like "202603.01.0"',
        ),
      ),
    }),
  ),
});

/**
 * Decodes a cluster's catalogue; `pools` are the names of the node pools its facts report (a
 * catalogue naming another pool, or a version twice, is malformed).
 */
export function versionCatalogueFromWire(
  raw: unknown,
  pools: readonly string[],
  path = "facts.catalogue",
): CatalogueDecoding {
  const bounded = parseWire(boundsSchema, raw, path);
  if (!bounded.ok) {
    const tooMany = bounded.problems.some((p) =>
      p.message.startsWith("must have at most"),
    );
    return refuse(bounded.problems, tooMany ? "implausible" : "malformed");
  }
  const long = longStrings(bounded.value, path);
  if (long.length > 0) return refuse(long, "implausible");
  const shaped = parseWire(shapeSchema, raw, path);
  if (!shaped.ok) return refuse(shaped.problems, "malformed");
  const problems: Problem[] = [];
  const seenVersions = new Set<string>();
  const kubernetes = shaped.value.kubernetes.map((k, i): KubernetesOffer => {
    if (seenVersions.has(k.version))
      problems.push({
        path: joinPath(joinPath(joinPath(path, "kubernetes"), i), "version"),
        message: "is listed twice",
        value: k.version,
      });
    seenVersions.add(k.version);
    return {
      version: k.version,
      ...(k.lts === true ? { lts: true as const } : {}),
      ...(k.preview === true ? { preview: true as const } : {}),
    };
  });
  const seenPools = new Set<string>();
  shaped.value.nodePools.forEach((p, i) => {
    const at = joinPath(joinPath(path, "nodePools"), i);
    if (!pools.includes(p.pool))
      problems.push({
        path: joinPath(at, "pool"),
        message: "is not a node pool of the cluster",
        value: p.pool,
      });
    else if (seenPools.has(p.pool))
      problems.push({
        path: joinPath(at, "pool"),
        message: "is listed twice",
        value: p.pool,
      });
    seenPools.add(p.pool);
  });
  if (problems.length > 0) return refuse(problems, "malformed");
  return {
    ok: true,
    value: {
      kubernetes,
      nodePools: shaped.value.nodePools.map((p) => ({
        pool: p.pool,
        imageVersions: [...new Set(p.imageVersions)],
      })),
    },
  };
}

function refuse(
  problems: readonly Problem[],
  reason: CatalogueRefusal,
): CatalogueDecoding {
  return { ok: false, reason, problems };
}

/** The catalogue as a Result (for callers that do not tell the refusals apart). */
export function catalogueResult(
  decoded: CatalogueDecoding,
): Result<VersionCatalogue> {
  return decoded.ok ? ok(decoded.value) : fail([...decoded.problems]);
}
