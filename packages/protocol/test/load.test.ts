import { describe, expect, it } from "vitest";
import { loadProtocol } from "@flotilla/protocol";
import { PROTO_FILES } from "@flotilla/protocol/testing";

/** Every RPC with its streaming shape: [request stream, response stream]. */
const AGENT_METHODS = {
  Connect: [true, true],
  Register: [false, false],
  RenewIdentity: [false, false],
} as const;

const ADMIN_METHODS = {
  ListClusters: [false, false],
  GetCluster: [false, false],
  LabelCluster: [false, false],
  RemoveCluster: [false, false],
  CreateClusterGroup: [false, false],
  UpdateClusterGroup: [false, false],
  GetClusterGroup: [false, false],
  ListClusterGroups: [false, false],
  DeleteClusterGroup: [false, false],
  PutObject: [true, false],
  ApplyBundle: [false, false],
  ListBundles: [false, false],
  GetBundle: [false, false],
  DeleteBundle: [false, false],
  PauseBundle: [false, false],
  ResumeBundle: [false, false],
  RedeployBundle: [false, false],
  RollbackBundle: [false, false],
  RenderBundle: [false, false],
  CreateUpdateStrategy: [false, false],
  UpdateUpdateStrategy: [false, false],
  GetUpdateStrategy: [false, false],
  ListUpdateStrategies: [false, false],
  DeleteUpdateStrategy: [false, false],
  CreateUpdateRun: [false, false],
  StartUpdateRun: [false, false],
  StopUpdateRun: [false, false],
  SkipUpdateRunTargets: [false, false],
  RetryUpdateRunMembers: [false, false],
  ApproveGate: [false, false],
  CompleteGate: [false, false],
  GetUpdateRun: [false, false],
  ListUpdateRuns: [false, false],
  WatchUpdateRun: [false, true],
  PreviewPlan: [false, false],
  ListAuditEvents: [false, false],
  WatchAuditEvents: [false, true],
  CreateBootstrapToken: [false, false],
  ListBootstrapTokens: [false, false],
  RevokeBootstrapToken: [false, false],
  IssueAdminCertificate: [false, false],
  GetHubStatus: [false, false],
  DeleteUpdateRun: [false, false],
  ListGates: [false, false],
  AddRelease: [false, false],
  RemoveRelease: [false, false],
  ListReleases: [false, false],
  ListClusterVersions: [false, false],
  CreateAutoUpgradeProfile: [false, false],
  UpdateAutoUpgradeProfile: [false, false],
  GetAutoUpgradeProfile: [false, false],
  ListAutoUpgradeProfiles: [false, false],
  DeleteAutoUpgradeProfile: [false, false],
  GenerateUpdateRun: [false, false],
  AddGitRepo: [false, false],
  UpdateGitRepo: [false, false],
  DeleteGitRepo: [false, false],
  GetGitRepo: [false, false],
  ListGitRepos: [false, false],
  SyncGitRepo: [false, false],
  WatchGitRepo: [false, true],
} as const;

function shapes(
  service: Record<string, { requestStream: boolean; responseStream: boolean }>,
): Record<string, readonly [boolean, boolean]> {
  return Object.fromEntries(
    Object.entries(service).map(([name, m]) => [
      name,
      [m.requestStream, m.responseStream] as const,
    ]),
  );
}

describe("loading the protos", () => {
  it("loads both entry files and caches the result", () => {
    expect(PROTO_FILES).toEqual([
      "flotilla/v1/agent.proto",
      "flotilla/v1/admin.proto",
    ]);
    expect(loadProtocol()).toBe(loadProtocol());
  });

  it("defines exactly the AgentService methods, with their streaming shapes", () => {
    expect(shapes(loadProtocol().agentService)).toEqual(AGENT_METHODS);
    expect(loadProtocol().agentService.Connect.path).toBe(
      "/flotilla.v1.AgentService/Connect",
    );
  });

  it("defines exactly the AdminService methods, with their streaming shapes", () => {
    expect(shapes(loadProtocol().adminService)).toEqual(ADMIN_METHODS);
  });

  it("gives client constructors with both method spellings", () => {
    const { AgentServiceClient, AdminServiceClient } = loadProtocol();
    expect(typeof AgentServiceClient.prototype.connect).toBe("function");
    expect(typeof AgentServiceClient.prototype.Register).toBe("function");
    for (const name of Object.keys(ADMIN_METHODS)) {
      const camel = name.charAt(0).toLowerCase() + name.slice(1);
      expect(typeof Reflect.get(AdminServiceClient.prototype, camel)).toBe(
        "function",
      );
    }
  });

  it("decodes with the documented options: camelCase, enum names, number longs, oneof names, defaults", () => {
    const connect = loadProtocol().agentService.Connect;
    const decoded = connect.requestDeserialize(
      connect.requestSerialize({
        status: {
          generation: "12",
          upgradeId: "u-1",
          phase: "STATUS_PHASE_READY",
        },
      }),
    );
    expect(decoded).toMatchObject({
      body: "status",
      status: {
        generation: 12,
        upgradeId: "u-1",
        subject: "upgradeId",
        phase: "STATUS_PHASE_READY",
        reasons: [],
        observedAtMs: 0,
      },
    });
    // proto3 `optional` fields stay absent rather than defaulting.
    expect(decoded.status).not.toHaveProperty("pendingUntilMs");
    expect(decoded.status).not.toHaveProperty("bundle");
  });
});
