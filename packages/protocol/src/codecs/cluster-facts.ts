/**
 * A cluster's facts as its agent reports them (labels, versions, node pools, region, support plan,
 * maintenance) on the wire. Decoding validates everything an agent can send: label syntax (core's rules), list
 * sizes, string lengths, Kubernetes version syntax (normalised without "v"), maintenance windows,
 * and the version catalogue (version-catalogue.ts), which the hub may refuse on its own.
 */
import {
  boundsProblems,
  fail,
  formatKubernetesVersion,
  joinPath,
  ok,
  parseKubernetesVersion,
  parseLabels,
  SUPPORT_PLANS,
  type Cluster,
  type Labels,
  type Maintenance,
  type Problem,
  type Result,
  type SupportPlan,
  compact,
} from "@flotilla/core";
import { z } from "zod";
import type * as wire from "../generated/index.js";
import { MAX_ID_LENGTH, MAX_LABELS, MAX_NODE_POOLS } from "../limits.js";
import { maintenanceFromWire, maintenanceToWire } from "./maintenance.js";
import { boundedList, boundedString, optional, parseWire } from "./validate.js";
import {
  versionCatalogueFromWire,
  versionCatalogueToWire,
  type CatalogueRefusal,
  type VersionCatalogue,
} from "./version-catalogue.js";

/** What an agent knows about its cluster: a {@link Cluster} without hub-side membership. */
export interface ClusterFacts {
  readonly labels: Labels;
  readonly kubernetesVersion?: string;
  readonly nodePools: Cluster["nodePools"];
  readonly region?: string;
  readonly maintenance?: Maintenance;
  /** What the cluster can move to; absent when the agent's driver cannot tell. */
  readonly catalogue?: VersionCatalogue;
  /** The support plan the agent is configured with; absent: KubernetesOfficial. */
  readonly supportPlan?: SupportPlan;
}

/** Facts as the hub takes them: a refused catalogue leaves the rest of the facts valid. */
export interface DecodedFacts {
  /** The facts, without `catalogue` when it was refused. */
  readonly facts: ClusterFacts;
  readonly refusedCatalogue?: {
    readonly reason: CatalogueRefusal;
    readonly problems: readonly Problem[];
  };
}

/** Encodes cluster facts. */
export function clusterFactsToWire(facts: ClusterFacts): wire.ClusterFacts {
  return {
    labels: { ...facts.labels },
    ...compact({ kubernetesVersion: facts.kubernetesVersion }),
    nodePools: facts.nodePools.map((p) => ({
      name: p.name,
      imageFamily: p.imageFamily,
      imageVersion: p.imageVersion,
      ...compact({ kubernetesVersion: p.kubernetesVersion }),
    })),
    ...compact({ region: facts.region, supportPlan: facts.supportPlan }),
    maintenance:
      facts.maintenance === undefined
        ? null
        : maintenanceToWire(facts.maintenance),
    catalogue:
      facts.catalogue === undefined
        ? null
        : versionCatalogueToWire(facts.catalogue),
  };
}

const kubernetesVersionField = boundedString(MAX_ID_LENGTH).transform(
  (raw, ctx): string => {
    const parsed = parseKubernetesVersion(raw);
    if (parsed.ok) return formatKubernetesVersion(parsed.value);
    for (const p of parsed.problems)
      ctx.addIssue({ code: "custom", message: p.message, input: raw });
    return z.NEVER;
  },
);

const id = boundedString(MAX_ID_LENGTH, 1);

const factsSchema = z.object({
  labels: z
    .record(z.string(), z.string())
    .refine(
      (labels) => Object.keys(labels).length <= MAX_LABELS,
      `must have at most ${String(MAX_LABELS)} labels`,
    ),
  kubernetesVersion: optional(kubernetesVersionField),
  nodePools: boundedList(
    z.object({
      name: id,
      imageFamily: id,
      imageVersion: id,
      kubernetesVersion: optional(kubernetesVersionField),
    }),
    MAX_NODE_POOLS,
  ),
  region: optional(id),
  maintenance: z.unknown(),
  supportPlan: optional(z.enum(SUPPORT_PLANS)),
});

/** Decodes and validates cluster facts from an agent, catalogue included; paths start at `path`. */
export function clusterFactsFromWire(
  raw: unknown,
  path = "facts",
): Result<ClusterFacts> {
  const decoded = agentFactsFromWire(raw, path);
  if (!decoded.ok) return decoded;
  const refused = decoded.value.refusedCatalogue;
  return refused === undefined
    ? ok(decoded.value.facts)
    : fail([...refused.problems]);
}

/**
 * Decodes cluster facts from an agent; an invalid catalogue does not fail the facts but is
 * returned as `refusedCatalogue` (the hub keeps the cluster's previous catalogue).
 */
export function agentFactsFromWire(
  raw: unknown,
  path = "facts",
): Result<DecodedFacts> {
  // Before zod, whose record parsing silently drops a "__proto__" label.
  const outOfBounds = boundsProblems(raw, path);
  if (outOfBounds.length > 0) return fail(outOfBounds);
  const shaped = parseWire(factsSchema, raw, path);
  if (!shaped.ok) return shaped;
  const f = shaped.value;
  const problems: Problem[] = [];
  const labels = parseLabels(f.labels, joinPath(path, "labels"));
  if (!labels.ok) problems.push(...labels.problems);
  const names = new Set<string>();
  f.nodePools.forEach((pool, i) => {
    if (names.has(pool.name)) {
      problems.push({
        path: joinPath(joinPath(joinPath(path, "nodePools"), i), "name"),
        message: "duplicate node pool name",
        value: pool.name,
      });
    }
    names.add(pool.name);
  });
  let maintenance: Maintenance | undefined;
  if (f.maintenance !== null && f.maintenance !== undefined) {
    const decoded = maintenanceFromWire(
      f.maintenance,
      joinPath(path, "maintenance"),
    );
    if (decoded.ok) maintenance = decoded.value;
    else problems.push(...decoded.problems);
  }
  if (problems.length > 0 || !labels.ok) return fail(problems);
  const rawCatalogue = (raw as { catalogue?: unknown }).catalogue;
  const catalogue =
    rawCatalogue === null || rawCatalogue === undefined
      ? undefined
      : versionCatalogueFromWire(
          rawCatalogue,
          f.nodePools.map((p) => p.name),
          joinPath(path, "catalogue"),
        );
  const facts: ClusterFacts = {
    labels: labels.value,
    ...compact({ kubernetesVersion: f.kubernetesVersion }),
    nodePools: f.nodePools.map((p) => ({
      name: p.name,
      imageFamily: p.imageFamily,
      imageVersion: p.imageVersion,
      ...compact({ kubernetesVersion: p.kubernetesVersion }),
    })),
    ...compact({
      region: f.region,
      supportPlan: f.supportPlan,
      maintenance,
      catalogue: catalogue?.ok === true ? catalogue.value : undefined,
    }),
  };
  return ok(
    catalogue === undefined || catalogue.ok
      ? { facts }
      : {
          facts,
          refusedCatalogue: {
            reason: catalogue.reason,
            problems: catalogue.problems,
          },
        },
  );
}
