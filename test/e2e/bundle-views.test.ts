/**
 * Per-cluster views end to end (docs/bundles.md#what-a-cluster-gets): nats-server, the hub with
 * the real helm, two simulated agents, and the built flotilla CLI. `bundle render DIR` prints each
 * cluster's customized objects and stores nothing, `bundle render NAME` prints what the applied
 * bundle gives the cluster, a Helm bundle renders with the cluster's values and Kubernetes version,
 * and `cluster get` lists the bundles on the cluster with their states.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTool, waitFor } from "@flotilla/testkit";
import { parseAllDocuments } from "yaml";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

let e2e: E2E;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-views-"));
  e2e = await startE2E({ hubArgs: ["--helm", await findTool("helm")] });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("eu-", 1, { region: "eu" }),
      clusters("us-", 1, { region: "us" }),
    ]),
  );
  await e2e.connected(2);
}, 120_000);

afterAll(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

async function ok(...args: string[]): Promise<{ out: string; err: string }> {
  const result = await e2e.cli(...args);
  expect(result.code, `flotilla ${args.join(" ")}: ${result.stderr}`).toBe(0);
  return { out: result.stdout, err: result.stderr };
}

/** The YAML documents of `text`. */
function docs(text: string): Record<string, unknown>[] {
  return parseAllDocuments(text).map(
    (d) => d.toJSON() as Record<string, unknown>,
  );
}

/** A plain bundle: a ConfigMap patched for eu, a namespace of its own for us. */
async function webDir(): Promise<string> {
  const dir = join(work, "web");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "fleet.yaml"),
    [
      "name: web",
      "defaultNamespace: web",
      "targets:",
      "  - clusterSelector: {}",
      "targetCustomizations:",
      "  - name: europe",
      "    clusterSelector: { matchLabels: { region: eu } }",
      "    patches:",
      "      - target: { kind: ConfigMap, name: web-config }",
      "        patch: { data: { REGION: eu } }",
      "  - name: america",
      "    clusterSelector: { matchLabels: { region: us } }",
      "    defaultNamespace: web-us",
      "",
    ].join("\n"),
  );
  await writeFile(
    join(dir, "config.yaml"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: live\n",
  );
  return dir;
}

describe("flotilla bundle render and cluster get", () => {
  it("renders a directory per cluster without storing it, then the applied bundle the same way", async () => {
    const dir = await webDir();
    const eu = await ok("bundle", "render", dir, "--cluster", "eu-01");
    const us = await ok("bundle", "render", dir, "--cluster", "us-01");
    expect(docs(eu.out)).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-config", namespace: "web" },
        data: { MODE: "live", REGION: "eu" },
      },
    ]);
    expect(docs(us.out)).toEqual([
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-config", namespace: "web-us" },
        data: { MODE: "live" },
      },
    ]);
    expect(eu.err).toContain(
      'for cluster eu-01: customization "europe" (targetCustomizations[0]), content web#c0',
    );
    // Nothing was applied.
    const none = await e2e.cli("bundle", "get", "web");
    expect(none.code).toBe(1);

    const applied = JSON.parse(
      (await ok("bundle", "apply", dir, "-o", "json")).out,
    ) as { bundle: { revision: string } };
    const byName = await ok("bundle", "render", "web", "--cluster", "eu-01");
    expect(byName.out).toBe(eu.out);
    const json = JSON.parse(
      (await ok("bundle", "render", "web", "--cluster", "eu-01", "-o", "json"))
        .out,
    ) as { revision: string; contentDigest: string; contentKey: string };
    expect(json).toMatchObject({
      revision: applied.bundle.revision,
      contentKey: "web#c0",
    });
    expect(json.contentDigest).toMatch(/^sha256:/);

    // The agent applies the revision rendered: cluster get shows it Ready there.
    await waitFor(
      async () => {
        const got = JSON.parse(
          (await ok("cluster", "get", "eu-01", "-o", "json")).out,
        ) as {
          bundles: { bundle: string; status: { state: string } }[];
        };
        return got.bundles.find((b) => b.bundle === "web")?.status.state ===
          "BUNDLE_CLUSTER_STATE_READY"
          ? true
          : undefined;
      },
      { timeoutMs: 30_000, message: "web to be Ready on eu-01" },
    );
    const table = await ok("cluster", "get", "eu-01");
    expect(table.out).toMatch(/Bundles \(1\):/);
    expect(table.out).toMatch(/web\s+Ready\s+\S+\s+\S+\s+\S+/);
    const cluster = JSON.parse(
      (await ok("cluster", "get", "us-01", "-o", "json")).out,
    ) as {
      bundles: {
        bundle: string;
        revision: string;
        status: { releasedRevision: string; appliedRevision: string };
      }[];
    };
    expect(cluster.bundles).toHaveLength(1);
    expect(cluster.bundles[0]).toMatchObject({
      bundle: "web",
      revision: applied.bundle.revision,
      status: { releasedRevision: applied.bundle.revision },
    });

    const unknown = await e2e.cli(
      "bundle",
      "render",
      "nope",
      "--cluster",
      "eu-01",
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('"nope"');
    const noCluster = await e2e.cli("bundle", "render", dir, "--cluster", "zz");
    expect(noCluster.code).toBe(1);
    expect(noCluster.stderr).toContain('"zz"');
  }, 120_000);

  it("renders the Helm example for each cluster with its values and Kubernetes version", async () => {
    const dir = join(work, "greeter");
    await cp(join(process.cwd(), "examples/helm-bundle"), dir, {
      recursive: true,
    });
    await writeFile(
      join(dir, "templates/version.yaml"),
      [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: {{ .Release.Name }}-kube",
        "data:",
        "  version: {{ .Capabilities.KubeVersion.Version | quote }}",
        "",
      ].join("\n"),
    );
    const eu = await ok("bundle", "render", dir, "--cluster", "eu-01");
    const us = await ok("bundle", "render", dir, "--cluster", "us-01");
    const config = (text: string, name: string) =>
      docs(text).find(
        (d) => (d["metadata"] as { name: string }).name === name,
      ) as { metadata: { namespace: string }; data: Record<string, string> };
    expect(config(eu.out, "greeter-greeting")).toMatchObject({
      metadata: { namespace: "greeter" },
      data: { greeting: "hello from prod", color: "green", replicas: "3" },
    });
    expect(config(us.out, "greeter-greeting").data).toMatchObject({
      color: "blue",
      replicas: "2",
    });
    // The simulated clusters report Kubernetes 1.29.9.
    expect(config(eu.out, "greeter-kube").data).toEqual({ version: "v1.29.9" });
    expect(eu.err).toContain("(rendered by helm)");
    expect(eu.err).toContain("# note: Helm lookup sees nothing");
  }, 120_000);
});
