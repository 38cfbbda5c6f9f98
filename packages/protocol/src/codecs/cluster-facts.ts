/**
 * A cluster's facts as its agent reports them (labels, versions, node pools, region, maintenance)
 * on the wire. Decoding validates everything an agent can send: label syntax (core's rules), list
 * sizes, string lengths, Kubernetes version syntax (normalised without "v"), maintenance windows.
 */
import {
  boundsProblems,
  fail,
  formatKubernetesVersion,
  joinPath,
  ok,
  parseKubernetesVersion,
  parseLabels,
  type Cluster,
  type Labels,
  type Maintenance,
  type Problem,
  type Result,
  compact,
} from "@flotilla/core";
import { z } from "zod";
import type * as wire from "../generated/index.js";
import { MAX_ID_LENGTH, MAX_LABELS, MAX_NODE_POOLS } from "../limits.js";
import { maintenanceFromWire, maintenanceToWire } from "./maintenance.js";
import { boundedList, boundedString, optional, parseWire } from "./validate.js";

/** What an agent knows about its cluster: a {@link Cluster} without hub-side membership. */
export interface ClusterFacts {
  readonly labels: Labels;
  readonly kubernetesVersion?: string;
  readonly nodePools: Cluster["nodePools"];
  readonly region?: string;
  readonly maintenance?: Maintenance;
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
    ...compact({ region: facts.region }),
    maintenance:
      facts.maintenance === undefined
        ? null
        : maintenanceToWire(facts.maintenance),
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
});

/** Decodes and validates cluster facts from an agent; problem paths start at `path`. */
export function clusterFactsFromWire(
  raw: unknown,
  path = "facts",
): Result<ClusterFacts> {
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
  return ok({
    labels: labels.value,
    ...compact({ kubernetesVersion: f.kubernetesVersion }),
    nodePools: f.nodePools.map((p) => ({
      name: p.name,
      imageFamily: p.imageFamily,
      imageVersion: p.imageVersion,
      ...compact({ kubernetesVersion: p.kubernetesVersion }),
    })),
    ...compact({ region: f.region, maintenance }),
  });
}
