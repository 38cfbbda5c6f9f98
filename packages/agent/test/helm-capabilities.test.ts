// The capabilities the agent gives `helm template` (docs/bundles.md#what-the-agent-does), read
// from a client that answers discovery from a table: what is listed, how long a read is kept,
// and what a failure does.
import { createManualClock } from "@flotilla/node/testing";
import { describe, expect, it } from "vitest";
import {
  createCapabilitiesSource,
  readCapabilities,
} from "../src/kube/helm-capabilities.js";
import {
  KubeCallError,
  type KubeClient,
  type KubeObject,
} from "../src/kube/kube-client.js";

const DISCOVERY: Readonly<Record<string, KubeObject>> = {
  "/version": { gitVersion: "v1.31.2+k3s1", major: "1", minor: "31" },
  "/api": { versions: ["v1"] },
  "/apis": {
    groups: [
      {
        name: "apps",
        versions: [{ groupVersion: "apps/v1", version: "v1" }],
      },
      {
        name: "metrics.k8s.io",
        versions: [
          { groupVersion: "metrics.k8s.io/v1beta1", version: "v1beta1" },
        ],
      },
    ],
  },
  "/api/v1": {
    resources: [
      { name: "configmaps", kind: "ConfigMap", namespaced: true },
      { name: "pods", kind: "Pod", namespaced: true },
      { name: "pods/status", kind: "Pod", namespaced: true },
    ],
  },
  "/apis/apps/v1": {
    resources: [{ name: "deployments", kind: "Deployment", namespaced: true }],
  },
};

/** A client answering discovery from `table`; other paths are 503 (an aggregated API down). */
function fakeClient(table: Record<string, KubeObject>): {
  client: KubeClient;
  reads: string[];
} {
  const reads: string[] = [];
  const client = {
    discovery(path: string): Promise<KubeObject> {
      reads.push(path);
      const found = table[path];
      return found === undefined
        ? Promise.reject(
            new KubeCallError(
              503,
              "ServiceUnavailable",
              `${path}: unavailable`,
            ),
          )
        : Promise.resolve(found);
    },
  } as unknown as KubeClient;
  return { client, reads };
}

describe("the cluster's capabilities for helm template", () => {
  it("lists every group/version and group/version/Kind; a group/version that fails keeps no kinds", async () => {
    const { client } = fakeClient({ ...DISCOVERY });
    expect(await readCapabilities(client)).toEqual({
      kubeVersion: "v1.31.2+k3s1",
      apiVersions: [
        "v1",
        "apps/v1",
        "metrics.k8s.io/v1beta1",
        "v1/ConfigMap",
        "v1/Pod",
        "apps/v1/Deployment",
      ],
    });
  });

  it("fails when /version has no gitVersion or discovery cannot be read", async () => {
    await expect(
      readCapabilities(fakeClient({ ...DISCOVERY, "/version": {} }).client),
    ).rejects.toThrow("GET /version answered without a gitVersion");
    const withoutGroups = Object.fromEntries(
      Object.entries(DISCOVERY).filter(([path]) => path !== "/apis"),
    );
    await expect(
      readCapabilities(fakeClient(withoutGroups).client),
    ).rejects.toThrow("/apis: unavailable");
  });

  it("keeps a read for the TTL, reads again after it or after invalidate(), and keeps no failure", async () => {
    const clock = createManualClock();
    const table: Record<string, KubeObject> = { ...DISCOVERY };
    const { client, reads } = fakeClient(table);
    const source = createCapabilitiesSource(
      { client, clock },
      { ttlMs: 60_000 },
    );
    const versionReads = () => reads.filter((p) => p === "/version").length;

    await source.current();
    await source.current();
    expect(versionReads()).toBe(1);
    await clock.advance(60_000);
    table["/version"] = { gitVersion: "v1.32.0" };
    expect((await source.current()).kubeVersion).toBe("v1.32.0");
    expect(versionReads()).toBe(2);
    source.invalidate();
    await source.current();
    expect(versionReads()).toBe(3);

    // A failed read is not kept: the next call reads again and succeeds.
    source.invalidate();
    const version = table["/version"];
    delete table["/version"];
    await expect(source.current()).rejects.toThrow("/version: unavailable");
    table["/version"] = version ?? {};
    expect((await source.current()).kubeVersion).toBe("v1.32.0");
  });

  it("shares one read between callers; a caller whose signal aborts stops waiting alone", async () => {
    const clock = createManualClock();
    const { client, reads } = fakeClient({ ...DISCOVERY });
    const source = createCapabilitiesSource({ client, clock });
    const stop = new AbortController();
    const first = source.current({ signal: stop.signal });
    const second = source.current();
    stop.abort(new Error("stopped"));
    await expect(first).rejects.toThrow("stopped");
    expect((await second).kubeVersion).toBe("v1.31.2+k3s1");
    expect(reads.filter((p) => p === "/version")).toHaveLength(1);
  });
});
