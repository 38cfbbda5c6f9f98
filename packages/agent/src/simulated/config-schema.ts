/**
 * The zod fields of a simulated cluster's settings, shared by the single-cluster form, the fleet
 * file's `defaults` and each of its `clusters` entries. Every field is optional here; config.ts
 * merges them and applies defaults.
 */
import {
  DNS_LABEL,
  formatKubernetesVersion,
  isDnsLabel,
  maintenanceField,
  parseKubernetesVersion,
  parseLabels,
  SUPPORT_PLANS,
  type Labels,
} from "@flotilla/core";
import { z } from "zod";
import { distributionField } from "./distribution.js";
import { catalogueField } from "./catalogue.js";

/** A cluster or bundle name: a DNS label of at most 63 characters. */
export const nameField = z
  .string()
  .max(63, "must be at most 63 characters")
  .regex(
    DNS_LABEL,
    "must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
  );

/** Whether `name` is a valid cluster name (for generated names). */
export function isClusterName(name: string): boolean {
  return isDnsLabel(name);
}

const labelsField = z.unknown().transform((raw, ctx): Labels => {
  const parsed = parseLabels(raw, "");
  if (parsed.ok) return parsed.value;
  for (const p of parsed.problems)
    ctx.addIssue({
      code: "custom",
      message: p.message,
      path: p.path === "" ? [] : [p.path],
      input: p.value,
    });
  return z.NEVER;
});

/** A Kubernetes version ("1.31.2", "v1.31"), normalized without "v". */
export const kubernetesVersionField = z
  .string()
  .transform((raw, ctx): string => {
    const parsed = parseKubernetesVersion(raw.replace(/^v/, ""));
    if (parsed.ok) return formatKubernetesVersion(parsed.value);
    for (const p of parsed.problems)
      ctx.addIssue({ code: "custom", message: p.message, input: raw });
    return z.NEVER;
  });

const nodePoolField = z.strictObject({
  name: z.string().min(1).max(128),
  imageFamily: z.string().min(1).max(128),
  imageVersion: z.string().min(1).max(128),
  kubernetesVersion: kubernetesVersionField.optional(),
});

const nodePoolsField = z
  .array(nodePoolField)
  .max(100)
  .superRefine((pools, ctx) => {
    const seen = new Set<string>();
    pools.forEach((p, i) => {
      if (seen.has(p.name))
        ctx.addIssue({
          code: "custom",
          path: [i, "name"],
          message: "duplicate node pool name",
          input: p.name,
        });
      seen.add(p.name);
    });
  });

const rate = z.number().min(0).max(1);

const failuresField = z.strictObject({
  /** Probability (0–1) that applying a bundle revision fails. */
  applyRate: rate.optional(),
  /** Bundles whose every apply fails. */
  bundles: z.array(nameField).optional(),
  /** Bundle revisions whose apply fails. */
  revisions: z
    .array(
      z.strictObject({
        bundle: nameField,
        revision: z.string().min(1).max(128),
      }),
    )
    .optional(),
  /** true: no bundle ever becomes Ready; a list: these bundles never do. */
  neverReady: z
    .union([z.boolean(), z.array(nameField)], {
      error: "must be true, false or a list of bundle names",
    })
    .optional(),
  /** Probability (0–1) that an upgrade fails. */
  upgradeRate: rate.optional(),
  /** Target Kubernetes versions whose upgrades fail ("fail upgrades to 1.31.2"). */
  versions: z.array(kubernetesVersionField).optional(),
});

/** The settings every form shares, all optional. */
export const settingsShape = {
  labels: labelsField.optional(),
  region: z.string().min(1).max(128).optional(),
  /** The support plan the agent reports (docs/agent.md#simulated-clusters); absent: KubernetesOfficial. */
  supportPlan: z.enum(SUPPORT_PLANS).optional(),
  kubernetesVersion: kubernetesVersionField.optional(),
  nodePools: nodePoolsField.optional(),
  timeToReady: distributionField.optional(),
  applyDuration: distributionField.optional(),
  upgradeDuration: distributionField.optional(),
  upgradeTypes: z
    .array(z.enum(["Full", "ControlPlaneOnly", "NodeImageOnly"]))
    .min(1)
    .optional(),
  failures: failuresField.optional(),
  maintenance: maintenanceField.optional(),
  maintenanceFile: z.string().min(1).optional(),
  /** What the cluster can move to (docs/agent.md#the-version-catalogue). */
  catalogue: catalogueField.optional(),
  /** A file holding `catalogue:`, re-read while the agent runs. */
  catalogueFile: z.string().min(1).optional(),
  seed: z.number().int().min(0).max(0xffff_ffff).optional(),
};

/** Parsed settings before defaults. */
export type Settings = z.output<z.ZodObject<typeof settingsShape>>;

/** The settings of one fleet entry or the fleet's defaults. */
export const settingsSchema = z.strictObject(settingsShape);

/** One `clusters` entry: a named cluster, or `count` clusters named `namePrefix` + index. */
export const entrySchema = z
  .strictObject({
    ...settingsShape,
    name: nameField.optional(),
    namePrefix: z.string().min(1).max(60).optional(),
    count: z.number().int().min(1).max(10_000).optional(),
    startIndex: z.number().int().min(0).max(1_000_000).optional(),
  })
  .superRefine((e, ctx) => {
    const issue = (path: string, message: string, input?: unknown): void => {
      ctx.addIssue({ code: "custom", path: [path], message, input });
    };
    const generated = e.namePrefix !== undefined || e.count !== undefined;
    if (e.name !== undefined && generated)
      issue("name", "set either name, or namePrefix and count", e.name);
    else if (e.name === undefined && !generated)
      issue("name", "is required (or namePrefix and count)");
    else if (generated && e.count === undefined)
      issue("count", "is required with namePrefix");
    else if (generated && e.namePrefix === undefined)
      issue("namePrefix", "is required with count");
    if (e.startIndex !== undefined && !generated)
      issue(
        "startIndex",
        "only applies with namePrefix and count",
        e.startIndex,
      );
  });

/** A parsed fleet entry. */
export type Entry = z.output<typeof entrySchema>;

/** A simulated fleet file. */
export const fleetSchema = z.strictObject({
  seed: z.number().int().min(0).max(0xffff_ffff).optional(),
  defaults: settingsSchema.optional(),
  clusters: z.array(entrySchema).min(1, "must list at least one cluster"),
});
