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
