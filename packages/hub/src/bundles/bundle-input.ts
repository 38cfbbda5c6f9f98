/**
 * Checking an ApplyBundle request before anything is stored: the name, the Fleet fields (parsed by
 * core as the fleet.yaml they came from, so problem paths read `bundle.targets[0].clusterSelector`),
 * and every manifest (inline bytes, or an object uploaded earlier with PutObject) down to its
 * Kubernetes objects. Every problem is reported at once as INVALID_ARGUMENT.
 */
import {
  bundleSpecWarnings,
  FlotillaError,
  parseBundleSpec,
  ok,
  parseJsonText,
  showValue,
  type FleetBundleSpec,
  type PlanWarning,
  type Problem,
  compact,
} from "@flotilla/core";
import {
  isSha256Digest,
  MAX_BUNDLE_CONTENT_BYTES,
  MAX_INLINE_MANIFEST_BYTES,
  type KubernetesObject,
  type wire,
} from "@flotilla/protocol";
import { nameProblem } from "../names.js";
import type { BundleRecord, ManifestRef } from "./bundle-record.js";
import { bundleFilesProblems } from "./bundle-files.js";
import { helmVariants, type HelmSupport } from "./helm-chart.js";
import { contentVariants, type ContentVariant } from "./bundle-render.js";
import {
  isKustomizeBundle,
  kustomizeObjects,
  type KustomizeSupport,
} from "./kustomize.js";
import { parseManifestObjects, type ManifestFile } from "./manifest-objects.js";
import type { ObjectReader } from "./object-reader.js";

/** A manifest with its bytes; `ref` is set when it was given as a stored object. */
export interface PreparedManifest {
  readonly path: string;
  readonly bytes: Uint8Array;
  readonly ref?: ManifestRef;
}

/** A valid ApplyBundle request, ready to render and store. */
export interface PreparedBundle {
  readonly name: string;
  readonly spec: FleetBundleSpec;
  /** The Fleet JSON texts as given ("" for none), stored as they are. */
  readonly targetsJson: string;
  readonly targetCustomizationsJson: string;
  readonly rolloutStrategyJson: string;
  /** The update strategy of a staged bundle (docs/semantics.md#staged-bundles); absent: partitions. */
  readonly updateStrategyName?: string;
  /** fleet.yaml `dependsOn` as given ("" for none). */
  readonly dependsOnJson: string;
  /** fleet.yaml `helm` as given ("" for none) and parsed, with the chart's digest (the revision). */
  readonly helmJson: string;
  readonly helm?: { readonly options: unknown; readonly chartDigest: string };
  /** fleet.yaml `kustomize` as given ("" for none), and parsed (part of the revision). */
  readonly kustomizeJson: string;
  readonly kustomize?: unknown;
  /** fleet.yaml `correctDrift`, `namespaceLabels`, `namespaceAnnotations` as given ("" for none). */
  readonly optionsJson: DeployOptionTexts;
  /**
   * `targetCustomizations` as parsed JSON: part of the revision (it decides what clusters get),
   * without `correctDrift`, which decides how drift is handled, not what is deployed.
   */
  readonly targetCustomizationsValue: unknown;
  readonly manifests: readonly PreparedManifest[];
  /** Renderer input files (BundleSpec.files), checked paths, in request order. */
  readonly files: readonly PreparedManifest[];
  readonly objects: readonly KubernetesObject[];
  /** The contents targets can get (customization patches applied), by `contents` key. */
  readonly variants: readonly ContentVariant[];
  readonly warnings: readonly PlanWarning[];
}

/** The deployment-option fields of a request or record as their JSON texts ("" for none). */
export interface DeployOptionTexts {
  readonly correctDriftJson: string;
  readonly namespaceLabelsJson: string;
  readonly namespaceAnnotationsJson: string;
}

/** `customizations` without their `correctDrift` (it is not part of the revision). */
function revisionCustomizations(customizations: unknown): unknown {
  if (!Array.isArray(customizations)) return customizations;
  return customizations.map((c: unknown) => {
    if (typeof c !== "object" || c === null || !("correctDrift" in c)) return c;
    return Object.fromEntries(
      Object.entries(c).filter(([key]) => key !== "correctDrift"),
    );
  });
}

/** Parses a `*_json` field within core's input bounds; "" is undefined. Problems go to `field`. */
function jsonField(text: string, field: string, problems: Problem[]): unknown {
  if (text.trim() === "") return undefined;
  const parsed = parseJsonText(text, field);
  if (parsed.ok) return parsed.value;
  problems.push(...parsed.problems);
  return undefined;
}

/** The document core's parseBundleSpec reads, assembled from the request's fields. */
export function bundleDocument(fields: {
  readonly defaultNamespace: string;
  readonly targetNamespace: string;
  readonly targets: unknown;
  readonly targetCustomizations: unknown;
  readonly rolloutStrategy: unknown;
  readonly paused: boolean;
  readonly helm?: unknown;
  readonly kustomize?: unknown;
  readonly labels?: unknown;
  readonly dependsOn?: unknown;
  readonly correctDrift?: unknown;
  readonly namespaceLabels?: unknown;
  readonly namespaceAnnotations?: unknown;
}): Record<string, unknown> {
  return {
    defaultNamespace: fields.defaultNamespace,
    namespace: fields.targetNamespace,
    paused: fields.paused,
    ...compact({
      targets: fields.targets,
      targetCustomizations: fields.targetCustomizations,
      rolloutStrategy: fields.rolloutStrategy,
      helm: fields.helm,
      kustomize: fields.kustomize,
      labels: fields.labels,
      dependsOn: fields.dependsOn,
      correctDrift: fields.correctDrift,
      namespaceLabels: fields.namespaceLabels,
      namespaceAnnotations: fields.namespaceAnnotations,
    }),
  };
}

/**
 * Checks `request` (an ApplyBundle `bundle`); throws INVALID_ARGUMENT with every problem, paths
 * starting at `bundle`. Manifests given as objects are read through `objects`.
 */
export async function prepareBundle(
  request: wire.BundleSpec__Output | null | undefined,
  objects: ObjectReader,
  signal?: AbortSignal,
  helmSupport?: HelmSupport,
  kustomizeSupport?: KustomizeSupport,
): Promise<PreparedBundle> {
  if (request == null) {
    throw FlotillaError.invalid("bundle", [
      { path: "bundle", message: "is required" },
    ]);
  }
  const problems: Problem[] = [];
  const name = request.name;
  const badName = nameProblem(name, "bundle.name");
  if (badName !== undefined) problems.push(badName);
  // A staged bundle: each new revision becomes a run of this strategy
  // (docs/semantics.md#staged-bundles); whether it exists is checked where runs are made.
  const updateStrategyName =
    (request.updateStrategyName ?? "") === ""
      ? undefined
      : request.updateStrategyName;
  if (updateStrategyName !== undefined) {
    const bad = nameProblem(updateStrategyName, "bundle.updateStrategyName");
    if (bad !== undefined) problems.push(bad);
    if ((request.rolloutStrategyJson ?? "") !== "")
      problems.push({
        path: "bundle.rolloutStrategy",
        message: `cannot be given with updateStrategyName ${showValue(updateStrategyName)}: a bundle rolls out by partitions or by staged runs, not both`,
        value: request.rolloutStrategyJson,
      });
  }
  const targets = jsonField(request.targetsJson, "bundle.targets", problems);
  const customizations = jsonField(
    request.targetCustomizationsJson,
    "bundle.targetCustomizations",
    problems,
  );
  const strategy = jsonField(
    request.rolloutStrategyJson ?? "",
    "bundle.rolloutStrategy",
    problems,
  );
  const helmJson = request.helmJson ?? "";
  const helmValue = jsonField(helmJson, "bundle.helm", problems);
  const kustomizeJson = request.kustomizeJson ?? "";
  const kustomizeValue = jsonField(kustomizeJson, "bundle.kustomize", problems);
  const dependsOnJson = request.dependsOnJson ?? "";
  const dependsOn = jsonField(dependsOnJson, "bundle.dependsOn", problems);
  const optionsJson: DeployOptionTexts = {
    correctDriftJson: request.correctDriftJson ?? "",
    namespaceLabelsJson: request.namespaceLabelsJson ?? "",
    namespaceAnnotationsJson: request.namespaceAnnotationsJson ?? "",
  };
  const options = {
    correctDrift: jsonField(
      optionsJson.correctDriftJson,
      "bundle.correctDrift",
      problems,
    ),
    namespaceLabels: jsonField(
      optionsJson.namespaceLabelsJson,
      "bundle.namespaceLabels",
      problems,
    ),
    namespaceAnnotations: jsonField(
      optionsJson.namespaceAnnotationsJson,
      "bundle.namespaceAnnotations",
      problems,
    ),
  };
  const spec = parseBundleSpec(
    bundleDocument({
      // The legacy field meant the default namespace (docs/semantics.md#namespaces).
      defaultNamespace:
        (request.defaultNamespace ?? "") === ""
          ? request.namespace
          : request.defaultNamespace,
      targetNamespace: request.targetNamespace ?? "",
      targets,
      targetCustomizations: customizations,
      rolloutStrategy: strategy,
      paused: request.paused,
      helm: helmValue,
      kustomize: kustomizeValue,
      labels: request.labels,
      dependsOn,
      ...options,
    }),
    "bundle",
  );
  if (!spec.ok) problems.push(...spec.problems);

  const inline = { bytes: 0 };
  const read = { objects, problems, inline, ...compact({ signal }) };
  const manifests = await readManifests(request.manifests, "manifests", read);
  const files = await readManifests(request.files, "files", read);
  problems.push(...bundleFilesProblems(files, "bundle.files"));
  if (inline.bytes > MAX_INLINE_MANIFEST_BYTES) {
    problems.push({
      path: "bundle",
      message: `inline manifests and files total ${String(inline.bytes)} bytes, more than the ${String(MAX_INLINE_MANIFEST_BYTES)} allowed; upload large files with PutObject and reference them`,
    });
  }
  let parsedObjects: KubernetesObject[] | undefined;
  if (manifests.length === request.manifests.length) {
    const files: ManifestFile[] = manifests.map((m, i) => ({
      path: m.path,
      bytes: m.bytes,
      field: `bundle.manifests[${String(i)}]`,
    }));
    const parsed = parseManifestObjects(files, "bundle.manifests");
    if (parsed.ok) parsedObjects = parsed.value;
    else problems.push(...parsed.problems);
  }
  // A Kustomize bundle's objects are its renders (docs/bundles.md#kustomize-bundles).
  const kustomize = spec.ok && isKustomizeBundle(spec.value, files);
  const kustomized =
    kustomize && parsedObjects !== undefined && problems.length === 0
      ? await renderKustomize(
          { spec: spec.value, files, manifests, signal, kustomizeSupport },
          problems,
        )
      : undefined;
  if (kustomized !== undefined) parsedObjects = [...kustomized.objects];
  // Patches are checked against the objects (one that matches none is refused), so only when
  // the spec and every object could be read.
  let variants =
    spec.ok &&
    parsedObjects !== undefined &&
    (!kustomize || kustomized !== undefined)
      ? contentVariants(
          spec.value,
          parsedObjects,
          "bundle",
          kustomized?.customizations,
        )
      : undefined;
  if (variants?.ok === false) problems.push(...variants.problems);
  let chartDigest: string | undefined;
  if (
    spec.ok &&
    spec.value.helm !== undefined &&
    variants?.ok === true &&
    problems.length === 0
  ) {
    if (manifests.length > 0)
      problems.push({
        path: "bundle.manifests",
        message:
          "must be empty in a Helm bundle: its objects are the chart's templates",
      });
    const helm = await helmVariants(
      {
        name,
        spec: spec.value,
        files,
        variants: variants.value.variants,
        ...compact({ support: helmSupport, signal }),
      },
      problems,
    );
    if (helm !== undefined) {
      variants = ok({ ...variants.value, variants: helm.variants });
      chartDigest = helm.chartDigest;
    }
  }
  if (
    problems.length > 0 ||
    !spec.ok ||
    parsedObjects === undefined ||
    variants?.ok !== true
  )
    throw FlotillaError.invalid("bundle", problems);
  const warnings = [
    ...bundleSpecWarnings(spec.value),
    ...variants.value.warnings,
    ...(kustomized?.warnings ?? []),
  ];
  if (variants.value.variants.every((v) => v.objects.length === 0)) {
    warnings.push({
      code: "NoManifests",
      message:
        "the bundle holds no Kubernetes objects: its targets receive nothing",
    });
  }
  return {
    name,
    spec: spec.value,
    targetsJson: request.targetsJson,
    targetCustomizationsJson: request.targetCustomizationsJson,
    rolloutStrategyJson: request.rolloutStrategyJson ?? "",
    ...compact({ updateStrategyName }),
    dependsOnJson,
    helmJson,
    kustomizeJson,
    ...compact({
      kustomize: kustomized === undefined ? undefined : (kustomizeValue ?? {}),
      helm:
        chartDigest === undefined
          ? undefined
          : { options: helmValue, chartDigest },
    }),
    optionsJson,
    targetCustomizationsValue: revisionCustomizations(customizations),
    manifests,
    files,
    objects: parsedObjects,
    variants: variants.value.variants,
    warnings,
  };
}

/**
 * The renders of a Kustomize bundle (kustomize.ts); undefined when something failed (the
 * problems are added to `problems`). Its objects come from the files only: manifests are refused.
 */
async function renderKustomize(
  input: {
    readonly spec: FleetBundleSpec;
    readonly files: readonly PreparedManifest[];
    readonly manifests: readonly PreparedManifest[];
    readonly signal: AbortSignal | undefined;
    readonly kustomizeSupport: KustomizeSupport | undefined;
  },
  problems: Problem[],
): ReturnType<typeof kustomizeObjects> {
  if (input.manifests.length > 0) {
    problems.push({
      path: "bundle.manifests",
      message:
        "must be empty in a Kustomize bundle: its objects are the kustomization's output (send the directory's files as files)",
    });
    return undefined;
  }
  return kustomizeObjects(
    {
      spec: input.spec,
      files: input.files,
      ...compact({
        support: input.kustomizeSupport,
        signal: input.signal,
      }),
    },
    problems,
  );
}

/** How {@link readManifests} reads: the object store, where problems go, the inline total. */
interface ReadContext {
  readonly objects: ObjectReader;
  readonly problems: Problem[];
  readonly inline: { bytes: number };
  readonly signal?: AbortSignal;
}

/**
 * The manifests (or files) of `field` with their bytes; one with a problem is left out (and the
 * problem noted). Inline bytes are added to `inline.bytes`.
 */
async function readManifests(
  manifests: readonly wire.Manifest__Output[],
  field: "manifests" | "files",
  { objects, problems, inline, signal }: ReadContext,
): Promise<PreparedManifest[]> {
  const out: PreparedManifest[] = [];
  const paths = new Map<string, number>();
  for (const [i, m] of manifests.entries()) {
    const at = `bundle.${field}[${String(i)}]`;
    const before = problems.length;
    if (m.path.trim() === "")
      problems.push({ path: `${at}.path`, message: "is required" });
    const first = paths.get(m.path);
    if (first !== undefined) {
      problems.push({
        path: `${at}.path`,
        message: `is the path of bundle.${field}[${String(first)}] already`,
        value: m.path,
      });
    } else paths.set(m.path, i);
    if (m.content === "object" || (m.yaml === undefined && m.object != null)) {
      const bytes = await readObject(
        m.object,
        `${at}.object`,
        objects,
        problems,
        signal,
      );
      if (bytes !== undefined && problems.length === before) {
        out.push({
          path: m.path,
          bytes,
          ref: {
            path: m.path,
            digest: m.object?.digest ?? "",
            sizeBytes: bytes.byteLength,
          },
        });
      }
    } else if (m.yaml !== undefined) {
      inline.bytes += m.yaml.byteLength;
      if (problems.length === before)
        out.push({ path: m.path, bytes: new Uint8Array(m.yaml) });
    } else {
      problems.push({
        path: at,
        message: "must carry its content: yaml or object",
      });
    }
  }
  return out;
}

async function readObject(
  ref: wire.ObjectRef__Output | null | undefined,
  at: string,
  objects: ObjectReader,
  problems: Problem[],
  signal: AbortSignal | undefined,
): Promise<Uint8Array | undefined> {
  if (ref == null || !isSha256Digest(ref.digest)) {
    problems.push({
      path: `${at}.digest`,
      message: 'must be "sha256:" and 64 lower-case hex digits',
      value: ref?.digest,
    });
    return undefined;
  }
  if (ref.sizeBytes > MAX_BUNDLE_CONTENT_BYTES) {
    problems.push({
      path: `${at}.sizeBytes`,
      message: `must be at most ${String(MAX_BUNDLE_CONTENT_BYTES)}`,
      value: ref.sizeBytes,
    });
    return undefined;
  }
  const bytes = await objects.read(ref.digest, compact({ signal }));
  if (bytes === undefined) {
    problems.push({
      path: `${at}.digest`,
      message:
        "no object is stored under this digest; upload it with PutObject first",
      value: ref.digest,
    });
    return undefined;
  }
  if (bytes.byteLength !== ref.sizeBytes) {
    problems.push({
      path: `${at}.sizeBytes`,
      message: `does not match the stored object's ${String(bytes.byteLength)} bytes`,
      value: ref.sizeBytes,
    });
    return undefined;
  }
  return bytes;
}

/**
 * A customization list of a record written before fleet.yaml `namespace` took Fleet's meaning:
 * its `namespace` meant the default namespace (docs/semantics.md#namespaces).
 */
function legacyCustomizations(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((c: unknown) => {
    if (typeof c !== "object" || c === null || !("namespace" in c)) return c;
    const { namespace, ...rest } = c as Record<string, unknown>;
    return { ...rest, defaultNamespace: namespace };
  });
}

/** Parses a stored record's spec (it was valid when written); older records keep their meaning. */
export function storedBundleSpec(record: BundleRecord): FleetBundleSpec {
  const json = (text: string): unknown =>
    text.trim() === "" ? undefined : JSON.parse(text);
  const legacy = record.defaultNamespace === undefined;
  const customizations = json(record.targetCustomizationsJson);
  const parsed = parseBundleSpec(
    bundleDocument({
      defaultNamespace: record.defaultNamespace ?? record.namespace,
      targetNamespace: record.targetNamespace ?? "",
      targets: json(record.targetsJson),
      targetCustomizations: legacy
        ? legacyCustomizations(customizations)
        : customizations,
      rolloutStrategy: json(record.rolloutStrategyJson),
      paused: record.paused,
      helm: json(record.helmJson ?? ""),
      kustomize: json(record.kustomizeJson ?? ""),
      labels: record.labels,
      dependsOn: json(record.dependsOnJson ?? ""),
      correctDrift: json(record.correctDriftJson ?? ""),
      namespaceLabels: json(record.namespaceLabelsJson ?? ""),
      namespaceAnnotations: json(record.namespaceAnnotationsJson ?? ""),
    }),
    "bundle",
  );
  if (!parsed.ok) {
    throw FlotillaError.invalid(
      `stored bundle ${showValue(record.name)}`,
      parsed.problems,
    );
  }
  return parsed.value;
}
