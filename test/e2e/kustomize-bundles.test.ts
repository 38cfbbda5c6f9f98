/**
 * Kustomize bundles end to end: the built CLI applies examples/kustomize-bundle to the real hub
 * (rendering with the real kubectl) and simulated agents until every target is Ready, each
 * cluster's content being its overlay's; a directory whose kustomization does not build, or names
 * a remote base, is refused with exit 2 naming the file; and an agent with the Kubernetes backend
 * (the testkit's API server) applies its overlay's objects, plain objects as any bundle's.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findTool,
  startKubeApiServer,
  startProcess,
  waitFor,
} from "@flotilla/testkit";
import { clusters, fleetFile, startE2E, type E2E } from "./fleet.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = join(ROOT, "examples/kustomize-bundle");

let e2e: E2E;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "flotilla-kustomize-"));
  const kubectl = await findTool("kubectl");
  e2e = await startE2E({ hubArgs: ["--kubectl", kubectl] });
  await e2e.startAgents(
    "fleet",
    fleetFile([
      clusters("dev-", 2, { env: "dev" }),
      clusters("prod-", 2, { env: "prod" }),
    ]),
  );
  await e2e.connected(4);
});

afterAll(async () => {
  await e2e.stop();
  await rm(work, { recursive: true, force: true });
});

/** A bundle directory under `work` holding `files` (path → text). */
async function bundleDir(
  name: string,
  files: Readonly<Record<string, string>>,
): Promise<string> {
  const dir = join(work, name);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

interface BundleView {
  readonly bundle: {
    readonly revision: string;
    readonly counts: { readonly targets: number; readonly ready: number };
  };
}

describe("Kustomize bundles through the CLI and a real hub", () => {
  it("applies the example until every target is Ready", async () => {
    const applied = await e2e.cli("bundle", "apply", EXAMPLE);
    expect(applied.code, applied.stderr).toBe(0);
    await waitFor(
      async () => {
        const got = await e2e.cli(
          "bundle",
          "get",
          "kustomize-bundle",
          "-o",
          "json",
        );
        const view = JSON.parse(got.stdout) as BundleView;
        return (
          view.bundle.counts.targets === 4 && view.bundle.counts.ready === 4
        );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 300,
        message: "the Kustomize bundle to be Ready on 4 clusters",
      },
    );
    // Applying the same directory again renders the same objects: no new revision.
    const again = await e2e.cli("bundle", "apply", EXAMPLE);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("unchanged");
  });

  it.each([
    [
      "missing-resource",
      { "kustomization.yaml": "resources: [missing.yaml]\n" },
      "kustomization.yaml: kustomization.yaml does not build: kubectl kustomize: error: accumulating resources",
    ],
    [
      "outside-file",
      {
        "fleet.yaml": "kustomize:\n  dir: overlays/dev\n",
        "secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
        "overlays/dev/kustomization.yaml": "resources: [../../secret.yaml]\n",
      },
      "overlays/dev/kustomization.yaml: overlays/dev/kustomization.yaml does not build: kubectl kustomize: error: accumulating resources: accumulation err='accumulating resources from '../../secret.yaml': security; file 'secret.yaml' is not in or below 'overlays/dev''",
    ],
    [
      "remote-base",
      {
        "kustomization.yaml":
          "resources:\n  - github.com/org/repo//base?ref=v1\n",
      },
      "kustomization.yaml: resources[0]: is a remote base, which the hub does not fetch",
    ],
    [
      "dir-outside",
      {
        "fleet.yaml": "kustomize:\n  dir: ../elsewhere\n",
        "kustomization.yaml": "resources: []\n",
      },
      'fleet.yaml: kustomize.dir: must stay inside the bundle directory (no ..) (got "../elsewhere")',
    ],
  ])("refuses %s with exit 2 naming the file", async (name, files, message) => {
    const dir = await bundleDir(name, files);
    const result = await e2e.cli("bundle", "apply", dir);
    expect(result.code, result.stdout).toBe(2);
    // The line starts with the file, in the bundle directory.
    expect(result.stderr).toContain(`${dir}/${message}`);
    const listed = await e2e.cli("bundle", "list");
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(name);
  });

  it("an agent with the Kubernetes backend applies the prod overlay it is given", async () => {
    const applied = await e2e.cli("bundle", "apply", EXAMPLE);
    expect(applied.code, applied.stderr).toBe(0);
    await using kube = await startKubeApiServer();
    kube.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "greeter" },
    });
    const kubeconfig = join(work, "kubeconfig.json");
    await writeFile(kubeconfig, kube.kubeconfig());
    await using agent = startProcess({
      name: "kube agent",
      args: [
        "packages/agent/dist/main.js",
        "--kubernetes",
        kubeconfig,
        "--cluster-name",
        "kube-1",
        "--label",
        "env=prod",
        "--hub",
        e2e.hubAddress,
        "--insecure-plaintext",
        "--nats",
        e2e.natsUrls.join(","),
        "--state-dir",
        join(work, "state-kube"),
        "--metrics-listen",
        "off",
        "--log-level",
        "warn",
      ],
    });
    // The cluster's labels decide its customization: wait for the prod overlay's replicas (the
    // hub may release before the agent's labels arrive, then follows them at the same revision).
    const deployment = await waitFor(
      () => {
        const found = kube.object("Deployment", "greeter", "greeter");
        return JSON.stringify(found?.["spec"]).includes('"replicas":3')
          ? found
          : undefined;
      },
      {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: "the prod overlay's Deployment applied",
      },
    ).catch(async (error: unknown) => {
      // What the hub and the agent say, for the failure message.
      const view = await e2e.cli("bundle", "get", "kustomize-bundle");
      throw new Error(`${String(error)}\n${agent.output()}\n${view.stdout}`, {
        cause: error,
      });
    });
    expect(deployment["spec"]).toMatchObject({ replicas: 3 });
    const settings = kube
      .objects("ConfigMap")
      .find((o) =>
        JSON.stringify(o["metadata"]).includes('"name":"greeter-settings-'),
      );
    expect(settings?.["data"]).toEqual({ greeting: "hello from prod" });
  }, 60_000);
});
