/**
 * The keys of a Fleet `fleet.yaml` that flotilla knows about: the ones the
 * bundle parser reads (`helm`'s own keys: helm-options.ts), Helm options misplaced at the top, and Fleet's other bundle fields it does not
 * implement. `flotilla plan` uses all of them to recognise a fleet.yaml; the bundle parser to say
 * "not supported" rather than "unknown".
 */

/** What flotilla reads from a fleet.yaml. */
export const SUPPORTED_BUNDLE_KEYS: readonly string[] = [
  "name",
  "defaultNamespace",
  "namespace",
  "targets",
  "targetCustomizations",
  "rolloutStrategy",
  "paused",
  "helm",
  "kustomize",
  "labels",
  "dependsOn",
  "correctDrift",
  "namespaceLabels",
  "namespaceAnnotations",
];

// Helm options given at the top instead of under `helm:`.
export const HELM_KEYS: readonly string[] = [
  "chart",
  "ociChartSpec",
  "valuesFiles",
];

/**
 * fleet.yaml and BundleDeploymentOptions fields flotilla does not implement, each with the reason
 * the refusal gives. docs/bundles.md#fleetyaml-keys lists the same keys and reasons (a test keeps
 * them equal).
 */
export const UNSUPPORTED_FLEET_KEYS: Readonly<Record<string, string>> = {
  targetNamespace:
    'Fleet\'s internal name of the fleet.yaml field "namespace": write "namespace"',
  yaml: "overlay files are not read: change objects per target with targetCustomizations[].patches",
  diff: "the agent compares only the fields a bundle's manifests set, so fields other controllers set are never drift: leave such a field out of the manifests",
  keepResources:
    "removing a bundle deletes the objects it applied: take an object out of the bundle's manifests first to keep it, as a new revision",
  deleteCRDResources:
    "removing a bundle deletes every object it applied, CustomResourceDefinitions included",
  deleteNamespace:
    "removing a bundle never deletes the namespace it deployed into, unless the Namespace is one of its manifests",
  ignore:
    "readiness follows the agent's rules per kind (docs/agent.md): conditions cannot be ignored",
  overrideTargets:
    "a GitRepo field: a bundle's targets are its fleet.yaml targets",
  imageScans: "image scanning (deprecated in Fleet) has no counterpart",
  serviceAccount:
    "the agent applies every bundle with its own identity: limit it with the agent chart's RBAC",
  forceSyncGeneration:
    "run flotilla bundle redeploy NAME to apply a bundle again now",
  targetRestrictions:
    "a GitRepo field: a bundle's targets are its fleet.yaml targets",
};

/** Whether `key` is a Fleet field flotilla refuses with a reason. */
export function isUnsupportedFleetKey(key: string): boolean {
  return Object.hasOwn(UNSUPPORTED_FLEET_KEYS, key);
}

/** Every fleet.yaml key flotilla knows but rolloutStrategy: one of them marks a fleet.yaml. */
export const FLEET_YAML_KEYS: readonly string[] = [
  ...SUPPORTED_BUNDLE_KEYS,
  ...HELM_KEYS,
  ...Object.keys(UNSUPPORTED_FLEET_KEYS),
].filter((key) => key !== "rolloutStrategy");
