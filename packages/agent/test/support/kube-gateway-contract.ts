/**
 * The shared contract suite of the KubeGateway port (gateway.ts): every adapter (the simulated
 * cluster, the client-node gateway against the local Kubernetes API server) runs it, so they agree
 * on phases, refusals, supersession, removal and watch replay.
 */
import type { BundleStatus, KubeGateway, Manifest } from "@flotilla/agent";
import { FlotillaError } from "@flotilla/core";
import { describe, expect, it } from "vitest";

/** One adapter under test. */
export interface Harness {
  readonly gateway: KubeGateway;
  /** Lets readiness complete (advances a fake clock, or plays the controllers of an API server). */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

/** Deployments named `names`, one replica each, in the request's namespace. */
export const deployments = (...names: string[]): Manifest[] =>
  names.map((name) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: { replicas: 1 },
  }));

/** Applies `manifests` as `revision` of `bundle`. */
export const apply = (
  kube: KubeGateway,
  revision: string,
  manifests = deployments("a", "b"),
  bundle = "web",
) => kube.applyBundle({ bundle, revision, manifests });

/** Runs the contract suite against the adapter `make` creates. */
export function describeKubeGatewayContract(
  name: string,
  make: () => Promise<Harness>,
): void {
  describe(`KubeGateway contract: ${name}`, () => {
    it("applies a revision: Applying, then Applied, then Ready once settled", async () => {
      const h = await make();
      const seen: string[] = [];
      h.gateway.watch((s) => seen.push(s.phase));
      const applied = await apply(h.gateway, "1");
      expect(applied).toMatchObject({
        bundle: "web",
        revision: "1",
        phase: "Applied",
        resourceCount: 2,
      });
      expect(seen.slice(0, 2)).toEqual(["Applying", "Applied"]);
      await h.settle();
      expect(h.gateway.status("web")).toMatchObject({
        phase: "Ready",
        resources: [],
      });
      expect(await h.gateway.listBundles()).toEqual([
        { bundle: "web", revision: "1" },
      ]);
      await h.stop();
    });

    it("refuses malformed manifests as a whole and keeps the previous revision in place", async () => {
      const h = await make();
      await apply(h.gateway, "1");
      await h.settle();
      const bad = await apply(h.gateway, "2", [
        ...deployments("a"),
        { apiVersion: "v1", kind: "ConfigMap", metadata: {} },
      ]);
      expect(bad.phase).toBe("Failed");
      expect(bad.error).toContain('Cannot apply bundle "web" revision "2"');
      expect(bad.error).toContain(
        "manifests[1].metadata.name: must be a non-empty string",
      );
      expect(await h.gateway.listBundles()).toEqual([
        { bundle: "web", revision: "1" },
      ]);
      await h.stop();
    });

    it("replays current statuses to a new watcher and stops calling it once its signal aborts", async () => {
      const h = await make();
      await apply(h.gateway, "1");
      const controller = new AbortController();
      const seen: BundleStatus[] = [];
      h.gateway.watch((s) => seen.push(s), { signal: controller.signal });
      expect(seen).toEqual([h.gateway.status("web")]);
      expect(seen[0]?.revision).toBe("1");
      controller.abort();
      const count = seen.length;
      await apply(h.gateway, "2");
      await h.settle();
      expect(seen.length).toBe(count);
      await h.stop();
    });

    it("removes a bundle's objects and inventory, and removing an unknown bundle succeeds", async () => {
      const h = await make();
      await apply(h.gateway, "1");
      await h.gateway.removeBundle("web");
      await h.gateway.removeBundle("never-applied");
      expect(await h.gateway.listBundles()).toEqual([]);
      expect(h.gateway.status("web")).toBeUndefined();
      await h.stop();
    });

    it("lets a newer apply of the same bundle supersede one in flight", async () => {
      const h = await make();
      const first = apply(h.gateway, "1");
      const second = apply(h.gateway, "2");
      const settled = Promise.allSettled([first, second]);
      await h.settle();
      const [a, b] = await settled;
      expect(b).toMatchObject({
        status: "fulfilled",
        value: { revision: "2", phase: "Applied" },
      });
      expect(a.status === "rejected" ? a.reason : undefined).toBeInstanceOf(
        FlotillaError,
      );
      expect(a).toMatchObject({
        reason: {
          message: expect.stringMatching(
            /revision "1".*superseded by revision "2"/,
          ),
        },
      });
      await h.settle();
      expect(h.gateway.status("web")).toMatchObject({
        revision: "2",
        phase: "Ready",
      });
      await h.stop();
    });
  });
}
