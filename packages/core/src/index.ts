/**
 * @flotilla/core: flotilla's rollout engine, pure and deterministic.
 *
 * Everything here is a function of its arguments: no I/O, no clock (time is `nowMs`), no
 * randomness. The hub and the agents only carry the engine's decisions; `flotilla plan` and
 * `flotilla simulate` run the same engine offline. What it decides: docs/semantics.md; which module
 * decides what: docs/engine.md.
 */

// Results and errors
export {
  ok,
  fail,
  problem,
  joinPath,
  showValue,
  formatProblem,
  formatProblems,
} from "./result.js";
export type { Problem, Result } from "./result.js";
export { compact } from "./compact.js";
export type { Compact } from "./compact.js";
export { FLOTILLA_ERROR_CODES, FlotillaError } from "./errors.js";
export type { FlotillaErrorCode } from "./errors.js";

// Bounds on every document read from outside
export {
  REFUSED_KEYS,
  boundsProblems,
  parseJsonText,
  tooDeepProblem,
} from "./input-bounds.js";

// Numbers, durations and selectors
export { parseDuration } from "./duration.js";
export {
  parseIntOrPercent,
  intOrPercentToString,
  fleetLimit,
  concurrency,
  failureBudget,
} from "./int-or-percent.js";
export type {
  IntOrPercent,
  IntOrPercentInput,
  IntOrPercentRule,
} from "./int-or-percent.js";
export {
  matchesSelector,
  EVERYTHING,
  MAX_LABELS,
  labelKeyProblem,
  labelValueProblem,
  parseLabels,
  parseSelectorString,
  selectorToString,
} from "./label-selector.js";
export type {
  SelectorOperator,
  Requirement,
  LabelSelector,
  Labels,
  LabelSelectorStruct,
} from "./label-selector.js";

// Clusters
export {
  parseClusterGroups,
  groupsOfCluster,
  compareNames,
  SUPPORT_PLANS,
} from "./cluster.js";
export type {
  NodePool,
  Cluster,
  ClusterGroup,
  SupportPlan,
} from "./cluster.js";
export { DNS_LABEL, editDistance, isDnsLabel } from "./schema.js";

// Maintenance windows and freezes
export {
  OPENS_SOON_MS,
  MAINTENANCE_HORIZON_MS,
  WINDOW_SCOPES,
  isOpenAt,
  nextOpening,
  nextChangeAfter,
  windowCategory,
  hasConstraints,
  describeWindows,
  maintenanceField,
  parseMaintenance,
} from "./maintenance/windows.js";
export type {
  WindowCategory,
  Maintenance,
  MaintenanceWindow,
  Freeze,
  WindowScope,
} from "./maintenance/windows.js";

// Versions, channels, upgrades
export {
  parseKubernetesVersion,
  formatKubernetesVersion,
  compareKubernetesVersions,
  compareNodeImageVersions,
  minorDistance,
  availableVersionsField,
  isOfferedIn,
  kubernetesVersionOf,
  newestNodeImage,
  newestNodeImageAt,
  kubernetesVersionField,
} from "./versions/version.js";
export type {
  KubernetesVersion,
  OfferPlace,
  AvailableVersions,
  AvailableKubernetesVersion,
  AvailableNodeImage,
} from "./versions/version.js";
export { resolveChannel, upgradeProfileField } from "./versions/channels.js";
export {
  MAX_PROFILE_NAME_LENGTH,
  autoUpgradeProfileField,
  parseAutoUpgradeProfile,
  profileNameProblem,
  profileRunName,
  resolveProfileTarget,
  ALL_MEMBERS_AT_ONCE,
  shortHash,
  strategyNameOf,
} from "./versions/auto-upgrade-profile.js";
export type {
  AutoUpgradeProfileSpec,
  ProfileTarget,
} from "./versions/auto-upgrade-profile.js";
export type {
  UpgradeChannel,
  UpgradeProfile,
  ChannelResolution,
  ResolveChannelOptions,
} from "./versions/channels.js";
export {
  upgradeField,
  upgradeWindowScope,
  selectConsistentNodeImages,
  memberUpgradeDecision,
  longTermSupportFailure,
  isTargetAvailable,
} from "./upgrade.js";
export type {
  UpgradeType,
  NodeImageSelection,
  UpgradePayload,
  ConsistentNodeImages,
  UpgradeSkipReason,
  UpgradeFailReason,
  NodeImageChange,
  NodeImageSkip,
  NodeImageSkipReason,
  MemberUpgradeDecision,
} from "./upgrade.js";

// Partitioned rollouts (Fleet rolloutStrategy)
export {
  detectFleetStrategy,
  FLEET_STRATEGY_DEFAULTS,
} from "./fleet/strategy.js";
export type {
  FleetRolloutStrategy,
  FleetPartitionSpec,
  UnassignedPolicy,
} from "./fleet/strategy.js";
export { formPartitions, resolveFleetLimits } from "./fleet/partitions.js";
export type {
  Partition,
  FleetLimits,
  PartitionPlan,
} from "./fleet/partitions.js";
export {
  rolloutPass,
  bundleClusterState,
  isUnavailable,
} from "./fleet/rollout-pass.js";
export type {
  BundleClusterState,
  DeploymentObservation,
  PassInput,
  PassResult,
  ReleaseDecision,
  HeldCluster,
  HoldReason,
  PartitionStatus,
  GateFailure,
} from "./fleet/rollout-pass.js";
export { rollbackPass } from "./fleet/rollback-pass.js";
export type {
  RollbackPassInput,
  RollbackPassResult,
  RollbackHeld,
} from "./fleet/rollback-pass.js";
// Metric gates between partitions (docs/semantics.md#partition-gates)
export {
  FLEET_GATE_PLACEHOLDERS,
  fillGateQuery,
  gatesAfter,
  isGateOpen,
  judgeGateOutcome,
  parseFleetGates,
  partitionGateStatus,
} from "./fleet/rollout-gates.js";
export type {
  FleetGateSpec,
  GateScope as PartitionGateScope,
  PartitionGateRecord,
  PartitionGateStatus,
  PartitionGateVerdict,
} from "./fleet/rollout-gates.js";
export { fleetWarnings } from "./fleet/warnings.js";
export {
  cycleText,
  dependencyHolds,
  dependencyLabel,
  dependencyMatches,
  dependenciesOf,
  dependentsOf,
  findDependencyCycle,
  parseDependsOn,
} from "./fleet/depends-on.js";
export type {
  BundleDependency,
  DependencyNode,
  DependencyState,
} from "./fleet/depends-on.js";
export {
  parseBundleSpec,
  bundleSpecWarnings,
  hasCriteria,
} from "./fleet/bundle-spec.js";
export type {
  FleetBundleSpec,
  BundleTargetMatcher,
  BundleTargetCustomization,
} from "./fleet/bundle-spec.js";
export {
  DEFAULT_VALUES_KEY,
  MAX_RELEASE_NAME_LENGTH,
  REFUSED_HELM_KEYS,
  parseHelmOptions,
  parseHelmCustomization,
  mergeHelmValues,
  layerValues,
  helmValuesFor,
  releaseNameOf,
  isLocalChart,
  localChartDir,
} from "./fleet/helm-options.js";
export type {
  HelmOptions,
  HelmValueLayers,
  HelmValues,
  HelmValuesFrom,
} from "./fleet/helm-options.js";
export {
  KUSTOMIZATION_FILES,
  kustomizationFileIn,
  kustomizeDirProblem,
  normalizeKustomizeDir,
  parseKustomizeOptions,
} from "./fleet/kustomize-options.js";
export type { KustomizeOptions } from "./fleet/kustomize-options.js";
export {
  bundleTargets,
  matchesTarget,
  targetDecision,
  type TargetDecision,
} from "./fleet/bundle-targets.js";
export {
  parseCorrectDrift,
  parseAnnotations,
  driftCorrectionFor,
  namespaceMetadataFor,
  MAX_NAMESPACE_ANNOTATION_CHARS,
} from "./fleet/deploy-options.js";
export type {
  DriftCorrection,
  NamespaceMetadata,
  DeployOptions,
} from "./fleet/deploy-options.js";
export type { BundleTarget } from "./fleet/bundle-targets.js";
export { applyMergePatch } from "./fleet/merge-patch.js";
export {
  customizeManifests,
  matchesPatchTarget,
  patchProblem,
} from "./fleet/customize.js";
export type {
  ManifestPatch,
  PatchTarget,
  ManifestObject,
  ManifestCustomization,
  CustomizeOptions,
} from "./fleet/customize.js";
export {
  placeObjects,
  builtInNamespaced,
  clusterScopedProblem,
  movedMessage,
} from "./fleet/namespace-rules.js";
export type {
  NamespaceRules,
  NamespacedPredicate,
  MovedObject,
  PlacedObjects,
} from "./fleet/namespace-rules.js";

// Staged update runs (AKS update strategy)
export {
  parseUpdateStrategy,
  isUpdateStrategyDocument,
  MAX_STAGE_CONCURRENCY,
} from "./update-strategy.js";
export { MAX_GROUPS_PER_STAGE } from "./update-strategy-rules.js";
export type {
  UpdateStrategy,
  StageSpec,
  GroupSpec,
  GateSpec,
  ApprovalGateSpec,
  ScheduledStartGateSpec,
  MetricGateSpec,
} from "./update-strategy.js";
export {
  resolveRun,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
} from "./staged/resolve.js";
export type { ResolveRunInput } from "./staged/resolve.js";
export type { BundleRelease } from "./staged/events.js";
export { step } from "./staged/step.js";
export {
  bundleReleasesOf,
  runBundleReleases,
  intentChangesOf,
  runIntents,
  upgradeIntentChange,
  appendIntentChanges,
} from "./staged/intents.js";
export { DEFAULT_DEFER_MS } from "./staged/outcomes.js";
export { cloneRun, isRunFinished, isMemberDone } from "./staged/run.js";
export type {
  Run,
  Stage,
  Group,
  Member,
  Gate,
  MetricGate,
  RunState,
  ScopeState,
  MemberState,
  GateState,
  RunPayload,
  RunOrigin,
  MemberTarget,
  MemberLocation,
} from "./staged/run.js";
export type {
  RunEvent,
  MemberOutcome,
  MemberSucceeded,
  MemberFailed,
  MemberDeferred,
  RunAction,
  Rejection,
  StepResult,
  Actor,
  TransitionScope,
} from "./staged/events.js";
export { judgementOf, nextWeeklyOccurrence } from "./staged/gates.js";
export { locateMember } from "./staged/member-index.js";
export { runWarnings } from "./staged/warnings.js";

// Intents
export {
  emptyIntent,
  changeIntent,
  canonicalJson,
  canonicalIntentJson,
  parseIntent,
} from "./intent.js";
export type {
  ClusterIntent,
  BundleIntent,
  IntentDriftCorrection,
  UpgradeIntent,
  IntentChange,
  IntentChanges,
} from "./intent.js";

// Offline previews
export { plan, planFleet, planStaged } from "./plan.js";
export { simulate } from "./simulate.js";
export { planChannel } from "./channel-plan.js";
export type { ChannelPlanInputs } from "./channel-plan.js";
export { parseScenario } from "./scenario.js";
export type { Scenario, ClusterBehaviour } from "./scenario.js";
export type { ScenarioAction, SkipTarget } from "./scenario-actions.js";
export type { StagedSimulationInput } from "./preview/simulate-staged.js";
export { simulateFleetRollout } from "./preview/simulate-fleet.js";
export type { FleetSimulationInput } from "./preview/simulate-fleet.js";
export type { PreviewInputs, ParsedStrategy } from "./preview/inputs.js";
export type {
  InputSource,
  InputProblem,
  PlanWarning,
  PlanGate,
  PlanGroup,
  PlanWave,
  PlanOutput,
  TimelineEntry,
  SimulatedMember,
  SimulatedGroup,
  SimulatedWave,
  SimulationOutput,
  PlannedMember,
  PlannedNodeImage,
  UpgradePlan,
  ChannelTarget,
  ChannelPlanOutput,
} from "./preview-types.js";
export {
  SUPPORTED_BUNDLE_KEYS,
  UNSUPPORTED_FLEET_KEYS,
} from "./fleet/fleet-yaml-keys.js";
export {
  FLEET_YAML,
  bundleRenderer,
  parseFleetYaml,
  type BundleDir,
  type BundleRenderer,
  type FleetYaml,
  type ManifestFile,
} from "./fleet/bundle-dir.js";

// Metric gates: the condition language and how measurements decide (docs/engine.md#metric-gates)
export {
  evaluateCondition,
  MAX_CONDITION_LENGTH,
  parseCondition,
} from "./metrics/condition.js";
export type {
  Condition,
  ConditionNode,
  ConditionOutcome,
} from "./metrics/condition.js";
export { analyse, judge } from "./metrics/analysis.js";
export type {
  AnalysisState,
  AnalysisVerdict,
  Measurement,
  MeasurementVerdict,
  MetricJudgement,
  QueryOutcome,
} from "./metrics/analysis.js";
