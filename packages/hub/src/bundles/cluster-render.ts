/**
 * What one cluster gets from a bundle (docs/bundles.md#what-a-cluster-gets): the target decision
 * (which customization, or why it is not a target), the content variant it gets, and that
 * content's objects as the agent applies them: a Helm chart rendered with `helm template` and the
 * cluster's Kubernetes version, then every object placed by the namespace rules for the kinds the
 * hub knows. Nothing is stored; where the agent's result can differ, a note says so.
 */
import {
  builtInNamespaced,
  FlotillaError,
  placeObjects,
  showValue,
  type Cluster,
  type FleetBundleSpec,
  type TargetDecision,
} from "@flotilla/core";
import type { BundleHelm, KubernetesObject } from "@flotilla/protocol";
import { renderChart, type HelmSupport } from "./helm-chart.js";
import { parseManifestObjects } from "./manifest-objects.js";

/** A content as the cluster gets it, before the agent renders and places it. */
export interface ViewContent {
  readonly namespace: string;
  readonly targetNamespace: string;
  readonly objects: readonly KubernetesObject[];
  readonly helm?: BundleHelm;
}

/** The cluster's view of one bundle revision. */
export interface ClusterRender {
  readonly bundle: string;
  readonly cluster: string;
  readonly revision: string;
  /** Set when the cluster is not a target: why. */
  readonly notTargeted?: string;
  readonly contentKey: string;
  /** The stored content's digest (an applied bundle). */
  readonly contentDigest?: string;
  readonly customizationIndex?: number;
  readonly customizationName?: string;
  readonly defaultNamespace: string;
  readonly targetNamespace: string;
  readonly helm: boolean;
  readonly objects: readonly KubernetesObject[];
  readonly notes: readonly string[];
}

/** The fields of {@link ClusterRender} that the target decision settles. */
export function decisionFields(
  spec: FleetBundleSpec,
  decision: TargetDecision,
): Pick<
  ClusterRender,
  | "notTargeted"
  | "customizationIndex"
  | "customizationName"
  | "defaultNamespace"
  | "targetNamespace"
> {
  if (decision.target === undefined)
    return {
      notTargeted: decision.notTargeted,
      defaultNamespace: "",
      targetNamespace: "",
    };
  const { target } = decision;
  const index = target.customization;
  const name =
    index === undefined ? undefined : spec.targetCustomizations[index]?.name;
  return {
    defaultNamespace: target.namespace,
    targetNamespace: target.targetNamespace,
    ...(index === undefined ? {} : { customizationIndex: index }),
    ...(name === undefined ? {} : { customizationName: name }),
  };
}

/** `Kind ns/name` of an object, for notes. */
function describe(o: KubernetesObject): string {
  const ns = o.metadata.namespace ?? "";
  return `${o.kind} ${ns === "" ? "" : `${ns}/`}${o.metadata.name}`;
}

/** The objects of a Helm content rendered for `cluster`, and the notes on what the hub cannot see. */
async function helmObjects(
  helm: BundleHelm,
  cluster: Cluster,
  support: HelmSupport | undefined,
  signal: AbortSignal | undefined,
): Promise<{ objects: KubernetesObject[]; notes: string[] }> {
  if (support === undefined)
    throw new FlotillaError(
      "failed_precondition",
      "The bundle is a Helm bundle, and this hub is not configured with helm (hub option helm)",
    );
  const notes: string[] = [
    "Helm lookup sees nothing when the hub renders: a chart that looks up objects of the cluster can render differently there",
  ];
  if (helm.valuesFrom.length > 0)
    notes.push(
      `valuesFrom is read on the cluster, not here: ${helm.valuesFrom
        .map(
          (v) =>
            `${v.kind} ${v.namespace ?? helm.namespace}/${v.name} key ${v.key}`,
        )
        .join(", ")} left out`,
    );
  const kubeVersion = cluster.kubernetesVersion;
  if (kubeVersion === undefined)
    notes.push(
      "the cluster has reported no Kubernetes version: helm's default version was used",
    );
  const rendered = await renderChart(support.helm, helm, {
    ...(kubeVersion === undefined ? {} : { kubeVersion }),
    ...(signal === undefined ? {} : { signal }),
  });
  if (!rendered.ok)
    throw new FlotillaError(
      "failed_precondition",
      `The chart does not render for cluster ${showValue(cluster.name)}: ${rendered.problems.map((p) => p.message).join("; ")}`,
    );
  const parsed = parseManifestObjects(
    [
      {
        path: "helm template",
        bytes: new TextEncoder().encode(rendered.value),
        field: "helm",
      },
    ],
    "helm",
  );
  if (!parsed.ok)
    throw new FlotillaError(
      "failed_precondition",
      `The chart's output cannot be read: ${parsed.problems.map((p) => p.message).join("; ")}`,
    );
  return { objects: parsed.value, notes };
}

/**
 * The objects `content` gives `cluster`, in the content's order (a chart's in helm's), placed by
 * the namespace rules for the kinds the hub knows, with notes on what the agent decides itself.
 */
export async function clusterObjects(
  content: ViewContent,
  cluster: Cluster,
  support: HelmSupport | undefined,
  signal?: AbortSignal,
): Promise<{ objects: KubernetesObject[]; notes: string[] }> {
  const notes: string[] = [];
  let objects: readonly KubernetesObject[] = content.objects;
  // A chart's objects go to the release namespace when they set none (docs/bundles.md#helm-bundles).
  let defaultNamespace = content.namespace;
  if (content.helm !== undefined) {
    const rendered = await helmObjects(content.helm, cluster, support, signal);
    objects = rendered.objects;
    notes.push(...rendered.notes);
    defaultNamespace = content.helm.namespace;
  }
  const rules = {
    defaultNamespace,
    targetNamespace: content.targetNamespace,
  };
  const placed = placeObjects(objects, rules, builtInNamespaced);
  const unknown = objects.filter(
    (o) => builtInNamespaced(o.apiVersion, o.kind) === undefined,
  );
  if (unknown.length > 0)
    notes.push(
      `the agent places ${unknown.map(describe).join(", ")} by the cluster's API discovery (kinds the hub cannot tell namespaced or cluster-scoped): shown as in the content`,
    );
  if (!placed.ok) {
    notes.push(
      ...placed.problems.map(
        (p) => `the agent refuses the content: ${p.message}`,
      ),
    );
    return { objects: [...objects], notes };
  }
  return { objects: placed.value.objects, notes };
}
