/**
 * `helm template` for the chart tests, with the real helm binary the testkit provides
 * (`findTool`, packages/testkit/src/tools.ts). Rendering starts a process, so these tests belong
 * to the e2e loop.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fail, ok, problem, type Result } from "@flotilla/core";
import { findTool, helmEnv } from "@flotilla/testkit";
import { parseAllDocuments, stringify } from "yaml";
import { ROOT, isObject } from "./chart-files.js";

/** The Kubernetes version rendered for (the charts need 1.25 or later). */
const KUBE_VERSION = "1.30.0";

/** The helm binary's path (the testkit extracts it from an npm package on first use). */
export function findHelm(): Promise<string> {
  return findTool("helm");
}

/** One rendered Kubernetes object. */
export type Manifest = Record<string, unknown> & {
  readonly kind: string;
  readonly metadata: { readonly name: string };
};

/**
 * Renders deploy/helm/`chart` as release `release` in namespace `flotilla-system` with `values`
 * (merged over the chart's own by helm) and `valuesFiles` (paths inside the chart) before them:
 * the objects, or helm's error as the one problem (a `fail` in a template, a schema error).
 */
export async function renderChart(
  chart: string,
  values: Record<string, unknown> = {},
  options: { valuesFiles?: readonly string[]; release?: string } = {},
): Promise<Result<readonly Manifest[]>> {
  const helm = await findHelm();
  const dir = join(ROOT, "deploy", "helm", chart);
  const work = await mkdtemp(join(tmpdir(), "flotilla-helm-"));
  try {
    const valuesFile = join(work, "values.yaml");
    await writeFile(valuesFile, stringify(values));
    const args = [
      "template",
      options.release ?? "flotilla-hub",
      dir,
      "--namespace",
      "flotilla-system",
      "--kube-version",
      KUBE_VERSION,
      ...(options.valuesFiles ?? []).flatMap((file) => [
        "--values",
        join(dir, file),
      ]),
      "--values",
      valuesFile,
    ];
    const env = helmEnv(work);
    try {
      const { stdout } = await promisify(execFile)(helm, args, {
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
      const manifests = parseAllDocuments(stdout)
        .map((document) => document.toJS() as unknown)
        .filter(
          (object): object is Manifest =>
            isObject(object) && typeof object.kind === "string",
        );
      return ok(manifests);
    } catch (error) {
      const stderr = (error as { stderr?: unknown }).stderr;
      return fail([
        problem(typeof stderr === "string" ? stderr : String(error)),
      ]);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The one object of `kind` (and `name`, when given) among `manifests`; throws otherwise. */
export function manifestOf(
  manifests: readonly Manifest[],
  kind: string,
  name?: string,
): Manifest {
  const found = manifests.filter(
    (m) => m.kind === kind && (name === undefined || m.metadata.name === name),
  );
  if (found.length !== 1) {
    throw new Error(
      `expected one ${kind}${name === undefined ? "" : ` ${name}`}, found ${String(found.length)}`,
    );
  }
  return found[0] as Manifest;
}

/** {@link renderChart}, throwing helm's message when the chart does not render. */
export async function renderedChart(
  chart: string,
  values: Record<string, unknown> = {},
  options: { valuesFiles?: readonly string[]; release?: string } = {},
): Promise<readonly Manifest[]> {
  const rendered = await renderChart(chart, values, options);
  if (!rendered.ok)
    throw new Error(rendered.problems.map((p) => p.message).join("\n"));
  return rendered.value;
}

/** A pod volume as the charts render it. */
export interface Volume {
  name: string;
  [key: string]: unknown;
}

/** A container as the charts render it. */
export interface Container {
  env: { name: string; value?: string }[];
  ports?: { containerPort: number }[];
  volumeMounts: { name: string; mountPath: string }[];
}

/**
 * The pod of the one Deployment in `manifests` and its first container, with lookups of the
 * container's environment, the pod's volumes and the container's mounts by name.
 */
export function podOf(manifests: readonly Manifest[]) {
  const spec = manifestOf(manifests, "Deployment").spec as {
    template: { spec: { volumes: Volume[]; containers: Container[] } };
  };
  const pod = spec.template.spec;
  const [container] = pod.containers;
  if (container === undefined) throw new Error("no container");
  const env = new Map(container.env.map((e) => [e.name, e.value]));
  const volume = (name: string): Volume | undefined =>
    pod.volumes.find((v) => v.name === name);
  const mount = (name: string): string | undefined =>
    container.volumeMounts.find((m) => m.name === name)?.mountPath;
  return { pod, container, env, volume, mount };
}
