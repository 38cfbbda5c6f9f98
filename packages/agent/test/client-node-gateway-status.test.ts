/**
 * What the client-node gateway reports after an apply, against the local Kubernetes API server
 * whose controllers the test plays with `setStatus`: readiness transitions per kind, drift seen
 * through the watch (Modified naming the field, Missing), drift corrected when asked, and the cap
 * on per-resource reasons.
 */
import type { Manifest } from "@flotilla/agent";
import { MAX_REASONS } from "@flotilla/protocol";
import { waitFor, type JsonObject } from "@flotilla/testkit";
import { describe, expect, it } from "vitest";
import {
  meta,
  rollOutDeployments,
  setup,
} from "./support/client-node-setup.js";
import { apply, deployments } from "./support/kube-gateway-contract.js";

interface KindCase {
  readonly manifest: Manifest;
  /** A status its controller reports while it is not ready, and the reason expected for it. */
  readonly pending: { status: JsonObject; message: string };
  readonly ready: JsonObject;
}

const gen = { observedGeneration: 1 };
const cases: Record<string, KindCase> = {
  Deployment: {
    manifest: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d" },
      spec: { replicas: 2 },
    },
    pending: {
      status: { ...gen, updatedReplicas: 2, availableReplicas: 1 },
      message: "1 of 2 replicas available",
    },
    ready: { ...gen, updatedReplicas: 2, availableReplicas: 2 },
  },
  StatefulSet: {
    manifest: {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "s" },
      spec: { replicas: 3 },
    },
    pending: {
      status: { ...gen, updatedReplicas: 1, readyReplicas: 1 },
      message: "1 of 3 replicas updated",
    },
    ready: {
      ...gen,
      updatedReplicas: 3,
      readyReplicas: 3,
      currentRevision: "r2",
      updateRevision: "r2",
    },
  },
  DaemonSet: {
    manifest: {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "ds" },
      spec: {},
    },
    pending: {
      status: {
        ...gen,
        desiredNumberScheduled: 4,
        updatedNumberScheduled: 4,
        numberAvailable: 3,
      },
      message: "3 of 4 pods available",
    },
    ready: {
      ...gen,
      desiredNumberScheduled: 4,
      updatedNumberScheduled: 4,
      numberAvailable: 4,
    },
  },
  ReplicaSet: {
    manifest: {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "rs" },
      spec: { replicas: 2 },
    },
    pending: {
      status: { ...gen, readyReplicas: 0 },
      message: "0 of 2 replicas ready",
    },
    ready: { ...gen, readyReplicas: 2 },
  },
  Job: {
    manifest: {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "j" },
      spec: {},
    },
    pending: { status: { active: 1 }, message: "job not complete" },
    ready: { conditions: [{ type: "Complete", status: "True" }] },
  },
  Pod: {
    manifest: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: {},
    },
    pending: {
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "False" }],
      },
      message: "pod Running, not ready",
    },
    ready: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "True" }],
    },
  },
  Service: {
    manifest: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "lb" },
      spec: { type: "LoadBalancer" },
    },
    pending: {
      status: { loadBalancer: {} },
      message: "waiting for a load balancer address",
    },
    ready: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } },
  },
  PersistentVolumeClaim: {
    manifest: {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data" },
      spec: {},
    },
    pending: { status: { phase: "Pending" }, message: "claim Pending" },
    ready: { phase: "Bound" },
  },
  APIService: {
    manifest: {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1.metrics.k8s.io" },
      spec: {},
    },
    pending: {
      status: {
        conditions: [
          { type: "Available", status: "False", message: "endpoints missing" },
        ],
      },
      message: "not available: endpoints missing",
    },
    ready: { conditions: [{ type: "Available", status: "True" }] },
  },
};

describe("readiness per kind through the client-node gateway", () => {
  it.each(Object.entries(cases))(
    "%s: NotReady with the reason, then Ready when its status says so",
    async (kind, c) => {
      await using s = await setup();
      await apply(s.gateway, "1", [c.manifest]);
      const name = String(meta(c.manifest).name);
      const ns = kind === "APIService" ? "" : "default";
      s.server.setStatus(kind, ns, name, c.pending.status);
      await waitFor(
        () =>
          s.gateway.status("web")?.resources[0]?.message === c.pending.message,
        {
          message: `${kind} to report "${c.pending.message}"`,
        },
      );
      expect(s.gateway.status("web")).toMatchObject({
        phase: "NotReady",
        resources: [{ kind, name, state: "NotReady" }],
      });
      s.server.setStatus(kind, ns, name, c.ready);
      await waitFor(() => s.gateway.status("web")?.phase === "Ready", {
        message: `${kind} to become Ready`,
      });
      const distinct = s.phases().filter((p, i, all) => p !== all[i - 1]);
      expect(distinct).toEqual([
        "Applying@1",
        "Applied@1",
        "NotReady@1",
        "Ready@1",
      ]);
    },
  );

  it("reads a Job that failed, and a Deployment past its progress deadline, as Failed objects", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", [
      cases.Job?.manifest ?? {},
      ...deployments("d"),
    ]);
    s.server.setStatus("Job", "default", "j", {
      conditions: [
        { type: "Failed", status: "True", message: "BackoffLimitExceeded" },
      ],
    });
    s.server.setStatus("Deployment", "default", "d", {
      ...gen,
      conditions: [
        {
          type: "Progressing",
          status: "False",
          reason: "ProgressDeadlineExceeded",
        },
      ],
    });
    await waitFor(
      () =>
        s.gateway.status("web")?.resources.filter((r) => r.state === "Failed")
          .length === 2,
    );
    expect(s.gateway.status("web")?.resources.map((r) => r.message)).toEqual([
      "job failed: BackoffLimitExceeded",
      "progress deadline exceeded",
    ]);
  });

  it("waits for the controller to observe a new generation before calling an object Ready", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("d"));
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    await apply(s.gateway, "2", [
      { ...(deployments("d")[0] ?? {}), spec: { replicas: 3 } },
    ]);
    await waitFor(() => s.gateway.status("web")?.phase === "NotReady");
    expect(s.gateway.status("web")?.resources[0]?.message).toBe(
      "waiting for the controller to observe generation 2 (observed 1)",
    );
  });

  it("caps per-resource reasons at the protocol's limit and counts the rest", async () => {
    await using s = await setup();
    const names = Array.from(
      { length: MAX_REASONS + 3 },
      (_, i) => `d-${String(i)}`,
    );
    await apply(s.gateway, "1", deployments(...names));
    await waitFor(() => s.gateway.status("web")?.phase === "NotReady");
    expect(s.gateway.status("web")).toMatchObject({
      resourceCount: MAX_REASONS + 3,
      resourcesTruncated: 3,
    });
    expect(s.gateway.status("web")?.resources).toHaveLength(MAX_REASONS);
  });
});

describe("drift through the client-node gateway", () => {
  it("reports Modified naming the changed field, and Ready again once re-applied", async () => {
    await using s = await setup();
    await apply(s.gateway, "1", deployments("a", "b"));
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    s.server.edit("Deployment", "default", "b", (d) => {
      (d.spec as JsonObject).replicas = 3;
    });
    await waitFor(() => s.gateway.status("web")?.phase === "Modified");
    expect(s.gateway.status("web")?.resources).toEqual([
      {
        kind: "Deployment",
        namespace: "default",
        name: "b",
        state: "Modified",
        message: "spec.replicas changed from 1 to 3",
      },
    ]);
    s.server.remove("Deployment", "default", "a");
    await waitFor(() =>
      s.gateway.status("web")?.resources.some((r) => r.state === "Missing"),
    );
    expect((await s.restart()).status("web")).toBeUndefined();
    const reapplied = await (
      await s.restart()
    ).applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a", "b"),
    });
    expect(reapplied.phase).toBe("Failed"); // the edit's manager owns spec.replicas: a conflict without force
    expect(reapplied.error).toContain(
      'conflict with "kubectl-edit": .spec.replicas',
    );
  });

  it("re-applies drifted and deleted objects at once when the bundle asks for correctDrift", async () => {
    await using s = await setup();
    await s.gateway.applyBundle({
      bundle: "web",
      revision: "1",
      manifests: deployments("a", "b"),
      correctDrift: { force: false },
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    s.server.edit("Deployment", "default", "b", (d) => {
      (d.spec as JsonObject).replicas = 3;
      ((d.metadata as JsonObject).labels as JsonObject).team = "x";
    });
    await waitFor(
      () =>
        (s.server.object("Deployment", "default", "b")?.spec as JsonObject)
          .replicas === 1,
      {
        message: "the drift to be corrected",
      },
    );
    s.server.remove("Deployment", "default", "a");
    await waitFor(() => s.server.object("Deployment", "default", "a"), {
      message: "the deleted object to be re-created",
    });
    rollOutDeployments(s.server);
    await waitFor(() => s.gateway.status("web")?.phase === "Ready");
    expect(s.phases()).toContain("Modified@1");
    const managers = (
      meta(s.server.object("Deployment", "default", "b"))
        .managedFields as JsonObject[]
    ).map((m) => m.manager);
    expect(managers).toContain("flotilla-agent");
  });
});
