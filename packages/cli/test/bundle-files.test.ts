// Renderer input files on the CLI side: the one rule deciding what renders a directory, reading
// every file of such a directory, sending them in BundleSpec.files (inline or uploaded), and the
// hub's problems about a file mapped back to it.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  bundleRenderer,
  readRendererFiles,
  type BundleDir,
} from "../src/commands/bundle-dir.js";
import {
  bundleProblemLines,
  bundleSpec,
  filesToUpload,
} from "../src/commands/bundle-request.js";
import { createProcessIo } from "../src/process-io.js";

const ignore = (): void => undefined;
const io = createProcessIo(
  { stdout: ignore, stderr: ignore, isTTY: false },
  {},
);

describe("bundleRenderer", () => {
  it.each([
    [["app.yaml"], null, "manifests"],
    [["Chart.yaml", "values.yaml"], null, "helm"],
    [["fleet.yaml"], { helm: { chart: "./chart" } }, "helm"],
    [["kustomization.yaml"], null, "kustomize"],
    [["Kustomization"], null, "kustomize"],
    [["fleet.yaml"], { kustomize: { dir: "overlays" } }, "kustomize"],
    [
      ["fleet.yaml"],
      { targetCustomizations: [{ kustomize: { dir: "overlays" } }] },
      "kustomize",
    ],
    [["fleet.yaml"], { namespace: "web" }, "manifests"],
  ] as const)("%j with %j is %s", (names, doc, renderer) => {
    expect(bundleRenderer(names, doc)).toBe(renderer);
  });
});

describe("readRendererFiles", () => {
  it("reads every file but the top fleet.yaml and hidden entries (a .helmignore is kept), in path order", async () => {
    const dir = await mkdtemp(join(tmpdir(), "flotilla-files-"));
    try {
      const files: Record<string, string> = {
        "fleet.yaml": "helm: {}\n",
        "Chart.yaml": "name: web\n",
        "templates/NOTES.txt": "hello\n",
        "templates/app.yaml": "kind: {{ .Values.kind }}\n",
        "charts/sub/fleet.yaml": "not the top one\n",
        ".git/config": "hidden\n",
        ".helmignore": "hidden too\n",
      };
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      const read = await readRendererFiles(io, dir);
      expect(read.ok && read.value.map((f) => f.path)).toEqual([
        ".helmignore",
        "Chart.yaml",
        "charts/sub/fleet.yaml",
        "templates/NOTES.txt",
        "templates/app.yaml",
      ]);
      expect(read.ok && new TextDecoder().decode(read.value[4]?.content)).toBe(
        "kind: {{ .Values.kind }}\n",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("sending files", () => {
  const dir: BundleDir = {
    fleet: {},
    hasFleetYaml: true,
    manifests: [],
    files: [
      { path: "Chart.yaml", content: new TextEncoder().encode("name: web\n") },
      { path: "charts/big.tgz", content: new Uint8Array(4 * 1024 * 1024) },
    ],
  };

  it("sends the files in BundleSpec.files, uploading the largest when they do not fit inline", () => {
    const upload = filesToUpload([...dir.manifests, ...dir.files]);
    expect([...upload]).toEqual(["charts/big.tgz"]);
    const spec = bundleSpec(dir, { name: "web" }, (m) =>
      upload.has(m.path)
        ? { object: { digest: "sha256:x", sizeBytes: m.content.byteLength } }
        : { yaml: m.content },
    );
    expect(spec.manifests).toEqual([]);
    expect(spec.files?.map((f) => [f.path, f.yaml === undefined])).toEqual([
      ["Chart.yaml", false],
      ["charts/big.tgz", true],
    ]);
  });

  it("maps the hub's problems about a file back to it", () => {
    const lines = bundleProblemLines("/src/web", dir, "directory");
    expect(
      lines([{ path: "bundle.files[1].object.digest", message: "is unknown" }]),
    ).toEqual(["/src/web/charts/big.tgz: object.digest: is unknown"]);
  });
});

describe("fleet.yaml deployment options", () => {
  const dir: BundleDir = {
    fleet: {
      correctDrift: { enabled: true, force: true },
      namespaceLabels: { team: "web" },
      namespaceAnnotations: { "example.com/owner": "web team" },
    },
    hasFleetYaml: true,
    manifests: [],
    files: [],
  };

  it("sends correctDrift, namespaceLabels and namespaceAnnotations as their JSON", () => {
    const spec = bundleSpec(dir, { name: "web" }, (m) => ({ yaml: m.content }));
    expect(spec).toMatchObject({
      correctDriftJson: '{"enabled":true,"force":true}',
      namespaceLabelsJson: '{"team":"web"}',
      namespaceAnnotationsJson: '{"example.com/owner":"web team"}',
    });
  });

  it("maps the hub's problems about them back to fleet.yaml", () => {
    const lines = bundleProblemLines("/src/web", dir, "directory");
    expect(
      lines([
        {
          path: "bundle.correctDrift.enabled",
          message: "must be a boolean",
          value: "yes",
        },
        { path: "bundle.namespaceLabels.team", message: "is bad" },
      ]),
    ).toEqual([
      '/src/web/fleet.yaml: correctDrift.enabled: must be a boolean (got "yes")',
      "/src/web/fleet.yaml: namespaceLabels.team: is bad",
    ]);
  });
});
