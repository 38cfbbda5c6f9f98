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

// fleet.yaml and BundleDeploymentOptions fields flotilla does not implement.
export const UNSUPPORTED_FLEET_KEYS: readonly string[] = [
  "targetNamespace",
  "yaml",
  "diff",
  "keepResources",
  "deleteCRDResources",
  "deleteNamespace",
  "ignore",
  "overrideTargets",
  "imageScans",
  "serviceAccount",
  "forceSyncGeneration",
  "targetRestrictions",
];

/** Every fleet.yaml key flotilla knows but rolloutStrategy: one of them marks a fleet.yaml. */
export const FLEET_YAML_KEYS: readonly string[] = [
  ...SUPPORTED_BUNDLE_KEYS,
  ...HELM_KEYS,
  ...UNSUPPORTED_FLEET_KEYS,
].filter((key) => key !== "rolloutStrategy");
