/**
 * The least role each AdminService method needs (part 4): `viewer` reads, `operator`
 * drives update runs (create, start, stop, skip, retry, delete, approve and complete gates) and
 * publishes releases (docs/engine.md#the-version-catalogue) and writes the auto-upgrade profiles
 * that create runs and syncs git repositories, `admin` does
 * everything else (clusters, groups, strategies, bundles, git repositories, uploads, bootstrap
 * tokens, admin certificates). The table is typed against the generated handlers so that a method added to
 * admin.proto without a role does not compile, and a test checks it against the loaded service.
 */
import type { wire } from "@flotilla/protocol";
import type { AdminRole } from "./identity.js";

// The handlers type carries grpc-js's string index signature; only the named methods count.
type AdminMethodName = keyof {
  [
    K in keyof wire.AdminServiceHandlers as string extends K ? never : K
  ]: unknown;
};

/** Every AdminService method and the weakest role that may call it. */
export const ADMIN_METHOD_ROLES = {
  // Clusters and groups: reading is for everyone, changing the fleet is for admins.
  ListClusters: "viewer",
  GetCluster: "viewer",
  LabelCluster: "admin",
  RemoveCluster: "admin",
  CreateClusterGroup: "admin",
  UpdateClusterGroup: "admin",
  GetClusterGroup: "viewer",
  ListClusterGroups: "viewer",
  DeleteClusterGroup: "admin",
  // Bundles and their content.
  PutObject: "admin",
  ApplyBundle: "admin",
  ListBundles: "viewer",
  GetBundle: "viewer",
  DeleteBundle: "admin",
  PauseBundle: "operator",
  ResumeBundle: "operator",
  RedeployBundle: "operator",
  // Puts back content an admin applied before, as redeploy restores what is applied
  // (docs/semantics.md#rolling-back-a-bundle).
  RollbackBundle: "operator",
  RenderBundle: "viewer",
  // Strategies say how every later run behaves: admin.
  CreateUpdateStrategy: "admin",
  UpdateUpdateStrategy: "admin",
  GetUpdateStrategy: "viewer",
  ListUpdateStrategies: "viewer",
  DeleteUpdateStrategy: "admin",
  // Runs: operators drive them.
  CreateUpdateRun: "operator",
  StartUpdateRun: "operator",
  StopUpdateRun: "operator",
  SkipUpdateRunTargets: "operator",
  RetryUpdateRunMembers: "operator",
  ApproveGate: "operator",
  CompleteGate: "operator",
  GetUpdateRun: "viewer",
  ListUpdateRuns: "viewer",
  WatchUpdateRun: "viewer",
  PreviewPlan: "viewer",
  // Audit.
  ListAuditEvents: "viewer",
  WatchAuditEvents: "viewer",
  // Who may join the fleet and who may administer it.
  CreateBootstrapToken: "admin",
  ListBootstrapTokens: "admin",
  RevokeBootstrapToken: "admin",
  IssueAdminCertificate: "admin",
  // The hub's replicas and streams: what an operator looks at.
  GetHubStatus: "viewer",
  // Run handling as `az fleet` offers it.
  DeleteUpdateRun: "operator",
  ListGates: "viewer",
  // The version catalogue: operators publish releases, as they drive the runs that use them.
  AddRelease: "operator",
  RemoveRelease: "operator",
  ListReleases: "viewer",
  ListClusterVersions: "viewer",
  // Auto-upgrade profiles make runs: operators write them, as they create runs.
  CreateAutoUpgradeProfile: "operator",
  UpdateAutoUpgradeProfile: "operator",
  GetAutoUpgradeProfile: "viewer",
  ListAutoUpgradeProfiles: "viewer",
  DeleteAutoUpgradeProfile: "operator",
  GenerateUpdateRun: "operator",
  // Git repositories decide what reaches the fleet, as bundles do: admins write them; operators
  // make the hub look for a new commit now, as they redeploy bundles.
  AddGitRepo: "admin",
  UpdateGitRepo: "admin",
  DeleteGitRepo: "admin",
  GetGitRepo: "viewer",
  ListGitRepos: "viewer",
  SyncGitRepo: "operator",
  WatchGitRepo: "viewer",
} as const satisfies Record<AdminMethodName, AdminRole>;

/**
 * The role method `method` (a bare name like `StartUpdateRun`) needs; undefined for a name that
 * is not an AdminService method, which callers refuse.
 */
export function requiredRole(method: string): AdminRole | undefined {
  return Object.hasOwn(ADMIN_METHOD_ROLES, method)
    ? ADMIN_METHOD_ROLES[method as AdminMethodName]
    : undefined;
}
