/**
 * `flotilla bundle …` with real directories on disk and a fake hub: what apply reads (fleet.yaml,
 * manifests in path order, hidden and non-manifest files skipped), what it sends (the Fleet fields
 * as JSON, inline manifests, large files through PutObject under their sha256 digest), what it
 * refuses locally (Helm, unknown fleet.yaml keys, YAML syntax), how the hub's problems are mapped
 * back to files, and `bundle get`'s view of a rollout.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import {
  toGrpcStatus,
  OBJECT_CHUNK_BYTES,
  MAX_INLINE_MANIFEST_BYTES,
  sha256Digest,
  type wire,
} from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { startFakeHub } from "./fake-hub.js";
import { NOW_MS } from "./fixtures.js";
import { runCliOnDisk, type CliResult } from "./support/run-cli.js";

/** A temporary directory holding `files` (path → content), removed when the scope ends. */
async function bundleDir(
  files: Record<string, string | Uint8Array>,
): Promise<{ path: string } & AsyncDisposable> {
  const path = await mkdtemp(join(tmpdir(), "flotilla-bundle-"));
  for (const [name, content] of Object.entries(files)) {
    await mkdir(dirname(join(path, name)), { recursive: true });
    await writeFile(join(path, name), content);
  }
  return {
    path,
    [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }),
  };
}

async function cli(
  hub: { address: string },
  argv: string[],
): Promise<CliResult> {
  // The real file system, the tests' clock.
  return runCliOnDisk([...argv, "--hub", hub.address, "--insecure-plaintext"], {
    env: { FLOTILLA_ACTOR: "tester" },
    nowMs: NOW_MS,
  });
}

/** The BundleSpec `bundle apply DIR` sends to a hub that accepts it. */
async function appliedSpec(
  dir: string,
): Promise<wire.BundleSpec__Output | null | undefined> {
  await using hub = await startFakeHub({
    unary: { ApplyBundle: (req) => appliedBundle(req.bundle ?? undefined) },
  });
  const { code, err } = await cli(hub, ["bundle", "apply", dir]);
  expect(code, err).toBe(0);
  const [request] =
    hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle");
  return request?.bundle;
}

const FLEET_YAML = `namespace: web
defaultNamespace: apps
targets:
  - name: prod
    clusterSelector:
      matchLabels: {env: prod}
targetCustomizations:
  - name: eu
    clusterSelector:
      matchLabels: {region: eu}
rolloutStrategy:
  maxUnavailable: 10%
  partitions:
    - name: canary
      clusterSelector: {matchLabels: {canary: "true"}}
`;

const DEPLOYMENT =
  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n";

function appliedBundle(
  spec: wire.BundleSpec__Output | undefined,
  changed = true,
): wire.ApplyBundleResponse {
  return {
    bundle: {
      spec: { ...spec, manifests: [] },
      revision:
        "sha256:3f2a9c0e1b7d4a5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6",
      createdAtMs: NOW_MS,
      updatedAtMs: NOW_MS,
      counts: { targets: 12, pending: 12 },
    },
    changed,
    warnings: [],
  };
}

describe("flotilla bundle apply", () => {
  it("sends fleet.yaml's fields as JSON and every manifest file in path order, inline", async () => {
    await using dir = await bundleDir({
      "fleet.yaml": FLEET_YAML,
      "service.yml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n",
      "deploy/app.yaml": `${DEPLOYMENT}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n`,
      "config.json": JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "web" },
      }),
      "README.md": "# not a manifest",
      ".git/config.yaml": "ignored: true",
    });
    await using hub = await startFakeHub({
      unary: { ApplyBundle: (req) => appliedBundle(req.bundle ?? undefined) },
    });
    const { code, out, err } = await cli(hub, [
      "bundle",
      "apply",
      dir.path,
      "--reason",
      "release 42",
    ]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const [request] =
      hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle");
    const spec = request?.bundle;
    expect(request?.reason).toBe("release 42");
    expect(spec?.name).toBe(basename(dir.path));
    // Both meanings explicit on the wire; the legacy field stays empty.
    expect(spec?.targetNamespace).toBe("web");
    expect(spec?.defaultNamespace).toBe("apps");
    expect(spec?.namespace).toBe("");
    expect(spec?.paused).toBe(false);
    expect(JSON.parse(spec?.targetsJson ?? "")).toEqual([
      { name: "prod", clusterSelector: { matchLabels: { env: "prod" } } },
    ]);
    expect(JSON.parse(spec?.targetCustomizationsJson ?? "")).toEqual([
      { name: "eu", clusterSelector: { matchLabels: { region: "eu" } } },
    ]);
    expect(JSON.parse(spec?.rolloutStrategyJson ?? "")).toEqual({
      maxUnavailable: "10%",
      partitions: [
        {
          name: "canary",
          clusterSelector: { matchLabels: { canary: "true" } },
        },
      ],
    });
    expect(spec?.manifests.map((m) => [m.path, m.content])).toEqual([
      ["config.json", "yaml"],
      ["deploy/app.yaml", "yaml"],
      ["service.yml", "yaml"],
    ]);
    expect(spec?.manifests[1]?.yaml?.toString("utf8")).toContain(
      "kind: ConfigMap",
    );
    expect(out).toBe(
      `Bundle ${basename(dir.path)} applied: revision 3f2a9c0e1b7d (new revision)\n  3 manifest files\n  12 targets · 12 Pending\n`,
    );
  });

  it("uploads a file too large to send inline through PutObject and references it by digest", async () => {
    const big = new TextEncoder().encode(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: "${"x".repeat(MAX_INLINE_MANIFEST_BYTES + 1024)}"\n`,
    );
    await using dir = await bundleDir({
      "fleet.yaml": "name: big-app\n",
      "app.yaml": DEPLOYMENT,
      "big.yaml": big,
    });
    const uploads: {
      header: wire.ObjectRef__Output | null;
      chunks: Buffer[];
    }[] = [];
    await using hub = await startFakeHub({
      unary: {
        ApplyBundle: (req) => appliedBundle(req.bundle ?? undefined, false),
      },
      streams: {
        PutObject: (call, callback) => {
          const upload = {
            header: null as wire.ObjectRef__Output | null,
            chunks: [] as Buffer[],
          };
          uploads.push(upload);
          call.on("data", (message: wire.PutObjectRequest__Output) => {
            if (message.header != null) upload.header = message.header;
            if (message.chunk !== undefined) upload.chunks.push(message.chunk);
          });
          call.on("end", () => {
            const content = Buffer.concat(upload.chunks);
            // The hub checks the digest it was promised against the bytes it got.
            if (upload.header?.digest !== sha256Digest(content))
              callback(
                toGrpcStatus(
                  FlotillaError.invalid("object", [
                    {
                      path: "header.digest",
                      message: "does not match the content",
                    },
                  ]),
                ),
              );
            else callback(null, { object: upload.header });
          });
        },
      },
    });
    const { code, out, err } = await cli(hub, ["bundle", "apply", dir.path]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(uploads).toHaveLength(1);
    const [upload] = uploads;
    expect(upload?.header).toEqual({
      digest: sha256Digest(big),
      sizeBytes: big.byteLength,
    });
    expect(Buffer.concat(upload?.chunks ?? []).equals(Buffer.from(big))).toBe(
      true,
    );
    expect(
      upload?.chunks.every((c) => c.byteLength <= OBJECT_CHUNK_BYTES),
    ).toBe(true);
    const [request] =
      hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle");
    expect(request?.bundle?.name).toBe("big-app");
    expect(request?.bundle?.manifests.map((m) => [m.path, m.content])).toEqual([
      ["app.yaml", "yaml"],
      ["big.yaml", "object"],
    ]);
    expect(request?.bundle?.manifests[1]?.object).toEqual({
      digest: sha256Digest(big),
      sizeBytes: big.byteLength,
    });
    expect(out).toContain("(unchanged: same content as the current revision)");
    expect(out).toContain("2 manifest files, 1 uploaded separately");
  });

  it("sends a Helm chart directory's files and fleet.yaml's helm, no manifests", async () => {
    await using dir = await bundleDir({
      "fleet.yaml": "namespace: web\nhelm:\n  values: {replicas: 2}\n",
      "Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\n",
      ".helmignore": "*.md\n",
      "templates/app.yaml": "kind: {{ .Values.kind }}\n",
    });
    const bundle = await appliedSpec(dir.path);
    expect(bundle?.manifests).toEqual([]);
    expect(bundle?.files?.map((f) => f.path)).toEqual([
      ".helmignore",
      "Chart.yaml",
      "templates/app.yaml",
    ]);
    expect(JSON.parse(bundle?.helmJson ?? "")).toEqual({
      values: { replicas: 2 },
    });
  });

  it("refuses a bad helm option with its fleet.yaml path before sending", async () => {
    await using dir = await bundleDir({
      "fleet.yaml": "helm:\n  atomic: true\n",
      "Chart.yaml": "name: web\n",
    });
    await using hub = await startFakeHub({});
    const { code, err } = await cli(hub, ["bundle", "apply", dir.path]);
    expect(code).toBe(2);
    expect(err).toContain("fleet.yaml: helm.atomic: is not supported");
    expect(hub.calls).toEqual([]);
  });

  it.each([
    [{ "kustomization.yaml": "resources: [app.yaml]\n" }, ""],
    [
      {
        "fleet.yaml": "kustomize: {dir: overlays}\n",
        "overlays/kustomization.yaml": "resources: [../app.yaml]\n",
      },
      '{"dir":"overlays"}',
    ],
    [
      {
        "fleet.yaml":
          "targetCustomizations:\n- clusterName: a\n  kustomize: {dir: overlays}\n",
        "overlays/kustomization.yaml": "resources: [../app.yaml]\n",
      },
      "",
    ],
  ])(
    "sends a Kustomize directory %# as files, with fleet.yaml's kustomize",
    async (files, kustomizeJson) => {
      await using dir = await bundleDir({ ...files, "app.yaml": DEPLOYMENT });
      const bundle = await appliedSpec(dir.path);
      expect(bundle?.manifests).toEqual([]);
      expect(bundle?.files?.map((f) => f.path)).toEqual(
        Object.keys({ ...files, "app.yaml": "" })
          .filter((p) => p !== "fleet.yaml")
          .sort(),
      );
      expect(bundle?.kustomizeJson).toBe(kustomizeJson);
    },
  );

  it("refuses unknown and unsupported fleet.yaml keys, with a suggestion for a typo", async () => {
    await using dir = await bundleDir({
      "fleet.yaml":
        "namespace: web\nrolloutStrategyy: {maxUnavailable: 1}\nimageScans: []\npaused: yes please\n",
      "app.yaml": DEPLOYMENT,
    });
    await using hub = await startFakeHub({});
    const { code, err } = await cli(hub, ["bundle", "apply", dir.path]);
    expect(code).toBe(2);
    const file = join(dir.path, "fleet.yaml");
    // Core's bundle-spec parser (the hub's) checks fleet.yaml before anything is sent.
    expect(err.trimEnd().split("\n").sort()).toEqual([
      `${file}: imageScans: fleet.yaml field "imageScans" is not supported by flotilla: image scanning (deprecated in Fleet) has no counterpart (got [])`,
      `${file}: paused: must be boolean (got "yes please")`,
      `${file}: rolloutStrategyy: unknown field; did you mean "rolloutStrategy"?`,
    ]);
  });

  it("sends customization patches, and refuses bad ones with their fleet.yaml paths", async () => {
    const customizations = `targetCustomizations:
  - name: eu
    clusterSelector: {matchLabels: {region: eu}}
    patches:
      - target: {kind: Deployment, name: web}
        patch: {spec: {replicas: 3}}
`;
    await using good = await bundleDir({
      "fleet.yaml": `namespace: web\n${customizations}`,
      "app.yaml": DEPLOYMENT,
    });
    await using hub = await startFakeHub({
      unary: { ApplyBundle: (req) => appliedBundle(req.bundle ?? undefined) },
    });
    const accepted = await cli(hub, ["bundle", "apply", good.path]);
    expect(accepted.err).toBe("");
    expect(accepted.code).toBe(0);
    const [request] =
      hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle");
    expect(JSON.parse(request?.bundle?.targetCustomizationsJson ?? "")).toEqual(
      [
        {
          name: "eu",
          clusterSelector: { matchLabels: { region: "eu" } },
          patches: [
            {
              target: { kind: "Deployment", name: "web" },
              patch: { spec: { replicas: 3 } },
            },
          ],
        },
      ],
    );

    await using bad = await bundleDir({
      "fleet.yaml":
        "targetCustomizations:\n  - clusterName: a\n    patches:\n      - target: {name: web}\n        patch: {kind: Service}\n",
      "app.yaml": DEPLOYMENT,
    });
    await using quiet = await startFakeHub({});
    const refused = await cli(quiet, ["bundle", "apply", bad.path]);
    expect(refused.code).toBe(2);
    const file = join(bad.path, "fleet.yaml");
    expect(refused.err.trimEnd().split("\n").sort()).toEqual([
      `${file}: targetCustomizations[0].patches[0].patch.kind: must not change the object's kind (got "Service")`,
      `${file}: targetCustomizations[0].patches[0].target.kind: is required`,
    ]);
    expect(quiet.calls).toEqual([]);
  });

  it("reports a manifest's YAML syntax error as FILE:LINE:COL, and an empty directory", async () => {
    await using dir = await bundleDir({
      "app.yaml": "kind: Deployment\nmetadata: {name: web\n",
    });
    await using empty = await bundleDir({ "fleet.yaml": "namespace: web\n" });
    await using hub = await startFakeHub({});
    const broken = await cli(hub, ["bundle", "apply", dir.path]);
    expect(broken.code).toBe(2);
    expect(broken.err).toMatch(
      new RegExp(
        `^${join(dir.path, "app.yaml").replace(/[.]/g, "\\.")}:\\d+:\\d+: `,
      ),
    );
    const none = await cli(hub, ["bundle", "apply", empty.path]);
    expect(none.code).toBe(2);
    expect(none.err).toContain(
      "no manifest files (*.yaml, *.yml, *.json) besides fleet.yaml",
    );
  });

  it("prints the hub's problems against fleet.yaml fields and manifest files, exit 2", async () => {
    await using dir = await bundleDir({
      "fleet.yaml": FLEET_YAML,
      "a.yaml": DEPLOYMENT,
      "deploy/b.yaml": DEPLOYMENT,
    });
    await using hub = await startFakeHub({
      unary: {
        ApplyBundle: () => {
          throw FlotillaError.invalid("bundle", [
            {
              path: "bundle.targetsJson[0].clusterSelector.matchLabels.env",
              message: "must be a string",
              value: 7,
            },
            {
              path: "rolloutStrategy.maxUnavailable",
              message: "must be a percentage",
              value: "10",
            },
            { path: "bundle.manifests[1]", message: "document 2 has no kind" },
          ]);
        },
      },
    });
    const { code, err } = await cli(hub, [
      "bundle",
      "apply",
      dir.path,
      "--name",
      "web",
    ]);
    expect(code).toBe(2);
    const fleet = join(dir.path, "fleet.yaml");
    expect(err).toContain(
      `  ${fleet}: targets[0].clusterSelector.matchLabels.env: must be a string (got 7)\n`,
    );
    expect(err).toContain(
      `  ${fleet}: rolloutStrategy.maxUnavailable: must be a percentage (got "10")\n`,
    );
    expect(err).toContain(
      `  ${join(dir.path, "deploy/b.yaml")}: document 2 has no kind\n`,
    );
  });

  it("sends --update-strategy instead of a rolloutStrategy, and refuses both", async () => {
    await using plain = await bundleDir({
      "fleet.yaml": "namespace: web\n",
      "a.yaml": DEPLOYMENT,
    });
    await using withStrategy = await bundleDir({
      "fleet.yaml": FLEET_YAML,
      "a.yaml": DEPLOYMENT,
    });
    await using hub = await startFakeHub({
      unary: {
        ApplyBundle: (req) => {
          const answer = appliedBundle(req.bundle ?? undefined);
          return {
            ...answer,
            bundle: { ...answer.bundle, updateRun: "web-3f2a9c0e" },
          };
        },
      },
    });
    const ok = await cli(hub, [
      "bundle",
      "apply",
      plain.path,
      "--update-strategy",
      "canary-first",
    ]);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain(
      "  Rolling out through staged run web-3f2a9c0e (flotilla run status web-3f2a9c0e)\n",
    );
    expect(
      hub.requests<wire.ApplyBundleRequest__Output>("ApplyBundle")[0]?.bundle,
    ).toMatchObject({
      updateStrategyName: "canary-first",
      rollout: "updateStrategyName",
      targetsJson: "",
    });
    const both = await cli(hub, [
      "bundle",
      "apply",
      withStrategy.path,
      "--update-strategy",
      "canary-first",
    ]);
    expect(both.code).toBe(2);
    expect(both.err).toContain(
      "--update-strategy and fleet.yaml's rolloutStrategy both say how to roll out",
    );
  });
});

describe("flotilla bundle pause|resume", () => {
  it("calls PauseBundle and ResumeBundle with the name and reason, and says what changed", async () => {
    const answer = (paused: boolean, changed: boolean) => () => ({
      bundle: {
        ...appliedBundle({ name: "web", paused } as wire.BundleSpec__Output)
          .bundle,
      },
      changed,
    });
    await using hub = await startFakeHub({
      unary: {
        PauseBundle: answer(true, true),
        ResumeBundle: answer(false, false),
      },
    });
    const paused = await cli(hub, [
      "bundle",
      "pause",
      "web",
      "--reason",
      "incident 42",
    ]);
    expect(paused.code).toBe(0);
    expect(paused.out).toBe("Bundle web paused (revision 3f2a9c0e1b7d).\n");
    expect(
      hub.requests<wire.PauseBundleRequest__Output>("PauseBundle"),
    ).toEqual([{ name: "web", reason: "incident 42" }]);
    const resumed = await cli(hub, ["bundle", "resume", "web", "-o", "json"]);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.out)).toMatchObject({
      changed: false,
      bundle: { spec: { paused: false } },
    });
  });
});

describe("flotilla bundle redeploy", () => {
  it("sends the name, every --cluster and the reason", async () => {
    await using hub = await startFakeHub({
      unary: {
        RedeployBundle: () => ({
          bundle: appliedBundle({ name: "web" } as wire.BundleSpec__Output)
            .bundle,
        }),
      },
    });
    const one = await cli(hub, [
      "bundle",
      "redeploy",
      "web",
      "--cluster",
      "a",
      "--cluster",
      "b",
      "--reason",
      "restore",
    ]);
    expect(one.code).toBe(0);
    expect(one.out).toBe(
      "Bundle web redeployed on a, b (revision 3f2a9c0e1b7d).\n",
    );
    const all = await cli(hub, ["bundle", "redeploy", "web"]);
    expect(all.out).toContain("on every target holding it");
    expect(
      hub.requests<wire.RedeployBundleRequest__Output>("RedeployBundle"),
    ).toEqual([
      { name: "web", clusters: ["a", "b"], reason: "restore" },
      { name: "web", clusters: [], reason: "" },
    ]);
  });
});

describe("flotilla bundle rollback and history", () => {
  const rolledBack = {
    fromRevision: "bbbbbbbbbbbbbbbb",
    toRevision: "aaaaaaaaaaaaaaaa",
    cause: "ROLLBACK_CAUSE_MANUAL" as const,
    message: "bad config",
    atMs: NOW_MS - 120_000,
    actor: "alice",
    allAtOnce: false,
    clustersBack: 2,
    clustersTouched: 6,
  };

  it("sends the name, --to, --all-at-once and the reason, and says what moves back", async () => {
    await using hub = await startFakeHub({
      unary: {
        RollbackBundle: () => ({
          bundle: {
            ...appliedBundle({ name: "web" } as wire.BundleSpec__Output).bundle,
            revision: "aaaaaaaaaaaaaaaa",
            rolledBack,
          },
        }),
      },
    });
    const paced = await cli(hub, [
      "bundle",
      "rollback",
      "web",
      "--to",
      "aaaa",
      "--reason",
      "errors up",
    ]);
    expect(paced.code, paced.err).toBe(0);
    expect(paced.out).toContain(
      "Bundle web rolled back from bbbbbbbbbbbb to aaaaaaaaaaaa: 6 cluster(s) holding bbbbbbbbbbbb move back, paced by the bundle's maxUnavailable.",
    );
    const all = await cli(hub, ["bundle", "rollback", "web", "--all-at-once"]);
    expect(all.out).toContain("all at once");
    expect(
      hub.requests<wire.RollbackBundleRequest__Output>("RollbackBundle"),
    ).toEqual([
      {
        name: "web",
        toRevision: "aaaa",
        allAtOnce: false,
        reason: "errors up",
      },
      { name: "web", toRevision: "", allAtOnce: true, reason: "" },
    ]);
  });

  it("shows the hub's refusal listing the revisions kept", async () => {
    await using hub = await startFakeHub({
      unary: {
        RollbackBundle: () => {
          throw FlotillaError.invalid("rollback", [
            {
              path: "toRevision",
              message:
                "is not a revision bundle web keeps; revisions kept: aaaa (current), bbbb",
              value: "cccc",
            },
          ]);
        },
      },
    });
    const refused = await cli(hub, [
      "bundle",
      "rollback",
      "web",
      "--to",
      "cccc",
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain("revisions kept: aaaa (current), bbbb");
  });

  it("history lists the revisions with stored, good and current, and the rollback; list marks RolledBack", async () => {
    const bundle = {
      ...appliedBundle({ name: "web" } as wire.BundleSpec__Output).bundle,
      rolledBack,
    };
    await using hub = await startFakeHub({
      unary: {
        GetBundle: () => ({
          bundle,
          clusters: [],
          partitions: [],
          unassigned: [],
          revisions: [
            {
              revision: "aaaaaaaaaaaaaaaa",
              storedAtMs: NOW_MS - 3_600_000,
              readyAtMs: NOW_MS - 3_000_000,
              current: true,
            },
            {
              revision: "bbbbbbbbbbbbbbbb",
              storedAtMs: NOW_MS - 600_000,
              current: false,
            },
          ],
        }),
        ListBundles: () => ({ bundles: [bundle], nextPageToken: "" }),
      },
    });
    const shown = await cli(hub, ["bundle", "history", "web"]);
    expect(shown.code, shown.err).toBe(0);
    const lines = shown.out.split("\n");
    expect(lines[0]).toMatch(/^REVISION\s+STORED\s+GOOD\s+CURRENT/);
    expect(lines[1]).toMatch(
      /^aaaaaaaaaaaa\s+1h ago\s+yes \(Ready 50m ago\)\s+\*/,
    );
    expect(lines[2]).toMatch(/^bbbbbbbbbbbb\s+10m ago\s+no/);
    expect(shown.out).toContain(
      "Bundle web rolled back from bbbbbbbbbbbb to aaaaaaaaaaaa (Manual, by alice, 2m ago): 2 of 6 clusters back — bad config",
    );
    const detail = await cli(hub, ["bundle", "get", "web"]);
    expect(detail.out).toContain("RolledBack: rolled back from bbbbbbbbbbbb");
    const listed = await cli(hub, ["bundle", "list"]);
    expect(listed.out).toContain("partitioned, RolledBack");
  });
});
