/**
 * `flotilla cluster pause|unpause`: Fleet's Cluster `spec.paused` on the hub. A paused cluster
 * receives no new bundle revision and does not count as unavailable in partitioned rollouts
 * (docs/semantics.md#paused-clusters); the pause is the operator's, kept across agent reports.
 */
import { EXIT_OK } from "../io.js";
import { adminCommand, prepared } from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { printJson, printLines } from "../hub/output.js";
import type { PositionalSpec } from "./command.js";

const NAME: PositionalSpec = {
  name: "NAME",
  description: "the cluster's name",
};

function pauseCommand(paused: boolean) {
  const verb = paused ? "pause" : "unpause";
  return adminCommand({
    name: `cluster ${verb}`,
    summary: paused
      ? "pause a cluster: bundle rollouts give it no new revision"
      : "unpause a cluster: bundle rollouts include it again",
    description: paused
      ? "Pauses the cluster, as Fleet's Cluster spec.paused does: partitioned bundle rollouts\n" +
        "release no new revision to it and do not count it as unavailable, so they go on without\n" +
        "it. Staged update runs are not affected (skip the member instead)."
      : "Unpauses the cluster: the next bundle passes give it the current revisions in its turn.",
    positionals: [NAME],
    mutating: true,
    prepare: (args) => prepared(args.positional("NAME") ?? ""),
    run: async (ctx, name) => {
      const answer = await ctx.hub.call("labelCluster", {
        name,
        setLabels: {},
        removeLabels: [],
        paused,
        expectedRevision: 0,
        reason: ctx.reason,
      });
      if (ctx.json) {
        printJson(ctx.io, answer);
        return EXIT_OK;
      }
      const cluster = present(answer.cluster, "cluster");
      const revision = `(revision ${String(cluster.revision)})`;
      printLines(ctx.io, [
        cluster.paused
          ? `Cluster ${cluster.name} paused ${revision}: bundle rollouts give it no new revision and do not count it as unavailable.`
          : `Cluster ${cluster.name} unpaused ${revision}: bundle rollouts include it again.`,
      ]);
      return EXIT_OK;
    },
  });
}

/** `flotilla cluster pause NAME`. */
export const pauseCluster = pauseCommand(true);
/** `flotilla cluster unpause NAME`. */
export const unpauseCluster = pauseCommand(false);
