/**
 * Running the real helm for bundles (docs/bundles.md#helm-bundles): each call gets its own
 * HELM_CACHE_HOME, HELM_CONFIG_HOME and HELM_DATA_HOME in a temporary directory, so that no
 * repository, plugin or registry login of the machine's user changes what a chart renders to,
 * and calls running side by side share nothing. The hub packages and trial-renders charts with
 * it, the agent renders them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Result } from "@flotilla/core";
import { runTool, type RunToolOptions, type ToolOutput } from "./run-tool.js";

/** How the processes name the helm option, for runTool's "not installed" message. */
export const HELM_CONFIGURED_BY = "--helm / FLOTILLA_HELM";

/** Runs `helm` (the binary's path or name) with `args` in a private helm home. */
export async function runHelm(
  helm: string,
  args: readonly string[],
  options: Omit<RunToolOptions, "env" | "configuredBy"> = {},
): Promise<Result<ToolOutput>> {
  const home = await mkdtemp(join(tmpdir(), "flotilla-helm-home-"));
  try {
    return await runTool(helm, args, {
      ...options,
      configuredBy: HELM_CONFIGURED_BY,
      env: {
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_DATA_HOME: join(home, "data"),
      },
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** What `helm template` needs of a Helm bundle's content (docs/bundles.md#helm-bundles). */
export interface HelmTemplateInput {
  readonly releaseName: string;
  readonly namespace: string;
  readonly skipSchemaValidation: boolean;
}

/** The cluster a chart is rendered for: `.Capabilities` in templates. */
export interface HelmCapabilities {
  /** The API server's `gitVersion` ("v1.31.2+k3s1"). */
  readonly kubeVersion: string;
  /** Served group/versions and group/version/Kinds ("apps/v1", "apps/v1/Deployment"). */
  readonly apiVersions: readonly string[];
}

/**
 * `helm template` arguments for the packaged chart at `chart` with the values files `values`
 * (merged by helm in order); with `capabilities`, the cluster's instead of helm's defaults. Chart
 * tests (`helm.sh/hook: test`) are left out: nothing runs them.
 */
export function helmTemplateArgs(
  input: HelmTemplateInput,
  chart: string,
  values: readonly string[],
  capabilities?: HelmCapabilities,
): string[] {
  return [
    "template",
    input.releaseName,
    chart,
    "--namespace",
    input.namespace,
    "--skip-tests",
    ...values.flatMap((file) => ["--values", file]),
    ...(capabilities === undefined
      ? []
      : [
          "--kube-version",
          capabilities.kubeVersion,
          ...(capabilities.apiVersions.length === 0
            ? []
            : ["--api-versions", capabilities.apiVersions.join(",")]),
        ]),
    ...(input.skipSchemaValidation ? ["--skip-schema-validation"] : []),
  ];
}
