/**
 * The version catalogue of a simulated cluster (docs/agent.md#the-version-catalogue): which
 * Kubernetes versions it can upgrade to and, per image family, which node images its pools can move
 * to. It comes from the cluster's config, inline (`catalogue`) or from a file (`catalogueFile`,
 * holding `catalogue:`) that is re-read while the agent runs, so a test or the demo "releases" a
 * version by rewriting the file. Invalid or unreadable content keeps the last valid catalogue.
 */
import {
  canonicalJson,
  formatKubernetesVersion,
  formatProblem,
  formatProblems,
  parseKubernetesVersion,
  type NodePool,
} from "@flotilla/core";
import {
  MAX_CATALOGUE_IMAGE_VERSIONS,
  MAX_CATALOGUE_KUBERNETES_VERSIONS,
  MAX_VERSION_LENGTH,
  NODE_IMAGE_VERSION,
  type KubernetesOffer,
  type VersionCatalogue,
} from "@flotilla/protocol";
import { z } from "zod";
import { parseWithSchema } from "./problems.js";
import { parserFor, readDocument, type TextParser } from "./text-file.js";
import { createListenerSet } from "@flotilla/node";

/** A simulated cluster's catalogue as configured: node images by family. */
export interface SimulatedCatalogue {
  readonly kubernetes: readonly KubernetesOffer[];
  readonly nodeImages: Readonly<Record<string, readonly string[]>>;
}

const versionField = z
  .string()
  .max(MAX_VERSION_LENGTH)
  .transform((raw, ctx): string => {
    const parsed = parseKubernetesVersion(raw, "full");
    if (parsed.ok) return formatKubernetesVersion(parsed.value);
    for (const p of parsed.problems)
      ctx.addIssue({ code: "custom", message: p.message, input: raw });
    return z.NEVER;
  });

/** `catalogue:` in a simulated cluster's settings or its catalogue file. */
export const catalogueField = z
  .strictObject({
    /** "1.31.2", or `{version, lts?, preview?}`. */
    kubernetes: z
      .array(
        z.union([
          versionField,
          z.strictObject({
            version: versionField,
            lts: z.boolean().optional(),
            preview: z.boolean().optional(),
          }),
        ]),
      )
      .max(MAX_CATALOGUE_KUBERNETES_VERSIONS)
      .optional(),
    /** Image family → the versions offered to its pools. */
    nodeImages: z
      .record(
        z.string().min(1).max(MAX_VERSION_LENGTH),
        z
          .array(
            z
              .string()
              .max(MAX_VERSION_LENGTH)
              .regex(
                NODE_IMAGE_VERSION,
                'must be a version like "202603.01.0"',
              ),
          )
          .max(MAX_CATALOGUE_IMAGE_VERSIONS),
      )
      .optional(),
  })
  .transform((c): SimulatedCatalogue => ({
    kubernetes: (c.kubernetes ?? []).map((k) =>
      typeof k === "string"
        ? { version: k }
        : {
            version: k.version,
            ...(k.lts === true ? { lts: true as const } : {}),
            ...(k.preview === true ? { preview: true as const } : {}),
          },
    ),
    nodeImages: c.nodeImages ?? {},
  }));

/** The catalogue the agent reports for `pools`: each pool gets its family's images. */
export function catalogueFacts(
  catalogue: SimulatedCatalogue,
  pools: readonly NodePool[],
): VersionCatalogue {
  return {
    kubernetes: catalogue.kubernetes,
    nodePools: pools.map((p) => ({
      pool: p.name,
      imageVersions: Object.hasOwn(catalogue.nodeImages, p.imageFamily)
        ? (catalogue.nodeImages[p.imageFamily] ?? [])
        : [],
    })),
  };
}

/** Where a simulated cluster's catalogue comes from. */
export interface CatalogueSource {
  /** The catalogue in force; undefined when none is configured or none was loaded yet. */
  current(): SimulatedCatalogue | undefined;
  /** The last load's problem, if the file could not be used. */
  error(): string | undefined;
  /** Re-reads the file (nothing for inline catalogues); listeners hear a change. */
  reload(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Calls `listener` after each change until `signal` aborts; returns the unsubscribe function. */
  watch(
    listener: () => void,
    options?: { readonly signal?: AbortSignal },
  ): () => void;
}

/** A catalogue source from inline settings, a file, or neither. */
export function createCatalogueSource(
  config: {
    readonly catalogue?: SimulatedCatalogue;
    readonly catalogueFile?: string;
  },
  options: { readonly parseText?: TextParser } = {},
): CatalogueSource {
  const listeners = createListenerSet();
  let state = config.catalogue;
  let problem: string | undefined;
  const file = config.catalogueFile;
  return {
    current: () => state,
    error: () => problem,
    async reload(reloadOptions = {}) {
      if (file === undefined) return;
      const before = canonicalJson(state ?? null);
      const read = await readDocument(
        file,
        parserFor(file, options.parseText),
        reloadOptions,
      );
      const kept =
        state === undefined
          ? "no catalogue is reported"
          : "the last valid catalogue stays";
      if (!read.ok)
        problem = `Cannot load the catalogue from "${file}": ${formatProblems(read.problems, "; ")}; ${kept}`;
      else {
        const parsed = parseWithSchema(
          z.strictObject({ catalogue: catalogueField }),
          read.value,
          "",
        );
        if (parsed.ok) {
          state = parsed.value.catalogue;
          problem = undefined;
        } else
          problem = `Cannot load the catalogue from "${file}": ${parsed.problems.map(formatProblem).join("; ")}; ${kept}`;
      }
      if (canonicalJson(state ?? null) !== before) listeners.emit();
    },
    watch(listener, watchOptions = {}) {
      return listeners.add(listener, watchOptions);
    },
  };
}
