/**
 * `flotilla bundle apply|list|get|delete|pause|resume|redeploy|history|rollback`: bundles of Kubernetes manifests rolled out to their
 * targets, described by a Fleet-style fleet.yaml.
 */
import { basename, resolve } from "node:path";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { printJson, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import {
  bundleDetail,
  bundleTable,
  countsLine,
  shortRevision,
} from "../render/bundle-view.js";
import { warningLines } from "../render/sections.js";
import { revisionTable, rollbackLine } from "../render/bundle-rollback-view.js";
import { readBundleDir, FLEET_YAML } from "./bundle-dir.js";
import { bundleProblemLines, sendableSpec } from "./bundle-request.js";
import { render } from "./bundle-render-command.js";
import type { Noun, PositionalSpec } from "./command.js";
import { compact } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";

const NAME: PositionalSpec = { name: "NAME", description: "the bundle's name" };

const apply = adminCommand({
  name: "bundle apply",
  summary:
    "create or update a bundle from a directory with fleet.yaml and manifests",
  description: [
    "Reads DIR's fleet.yaml (name, namespace, targets, targetCustomizations, rolloutStrategy,",
    "paused) and every other *.yaml, *.yml and *.json file below DIR (hidden entries skipped) as",
    "manifests, and sends them to the hub. A content change makes a new revision, which rolls out",
    "by fleet.yaml's rolloutStrategy. Large files are uploaded first. A Helm chart or a Kustomize",
    "directory (Chart.yaml or a kustomization at the top, or helm/kustomize in fleet.yaml) is sent",
    "as files for the renderer. Not supported yet: staged bundle rollouts (the hub refuses",
    "--update-strategy).",
  ].join("\n"),
  positionals: [{ name: "DIR", description: "the bundle directory" }],
  options: {
    name: {
      type: "string",
      valueName: "NAME",
      description:
        "the bundle's name (default: fleet.yaml's name, else DIR's base name)",
    },
    "update-strategy": {
      type: "string",
      valueName: "STRATEGY",
      description:
        "stage the bundle: the hub rolls each new revision out as a run of this stored update strategy, which it makes and starts (instead of fleet.yaml's rolloutStrategy)",
    },
  },
  mutating: true,
  prepare: async (args, io) => {
    const dirPath = args.positional("DIR") ?? "";
    const read = await readBundleDir(io, dirPath);
    if (!read.ok) return read;
    const dir = read.value;
    const updateStrategy = args.string("update-strategy");
    if (updateStrategy !== undefined && dir.fleet.rolloutStrategy !== undefined)
      return refused([
        usageMessage(
          "bundle apply",
          `--update-strategy and ${FLEET_YAML}'s rolloutStrategy both say how to roll out; keep one`,
        ),
      ]);
    const flagName = args.string("name");
    const nameFrom =
      flagName !== undefined
        ? "flag"
        : dir.fleet.name !== undefined
          ? "fleet.yaml"
          : "directory";
    const name = flagName ?? dir.fleet.name ?? basename(resolve(dirPath));
    return prepared({
      dirPath,
      dir,
      nameFrom,
      settings: {
        name,
        ...compact({ updateStrategy }),
      },
    } as const);
  },
  run: async (ctx, input) => {
    const { dir } = input;
    ctx.problemLines(bundleProblemLines(input.dirPath, dir, input.nameFrom));
    const { bundle, uploaded } = await sendableSpec(
      ctx.hub,
      dir,
      input.settings,
    );
    const answer = await ctx.hub.call("applyBundle", {
      bundle,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const applied = present(answer.bundle, "bundle");
    const manifests =
      dir.files.length > 0
        ? `${String(dir.files.length)} file${dir.files.length === 1 ? "" : "s"} for the renderer`
        : `${String(dir.manifests.length)} manifest file${dir.manifests.length === 1 ? "" : "s"}`;
    printLines(ctx.io, [
      `Bundle ${input.settings.name} applied: revision ${shortRevision(applied.revision)} ` +
        (answer.changed
          ? "(new revision)"
          : "(unchanged: same content as the current revision)"),
      `  ${manifests}${uploaded > 0 ? `, ${String(uploaded)} uploaded separately` : ""}`,
      `  ${countsLine(applied.counts, ctx.render)}`,
      ...runLines(applied, answer.changed),
      ...warningLines(answer.warnings, ctx.render),
    ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: "bundle list",
  summary: "list the bundles",
  description:
    "Lists every bundle with its current revision, rollout and readiness.",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const bundles = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listBundles", { pageToken });
      return { items: page.bundles, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { bundles });
    else if (bundles.length === 0) printLines(ctx.io, ["No bundles."]);
    else printLines(ctx.io, bundleTable(bundles, ctx.render, ctx.io.now()));
    return EXIT_OK;
  },
});

const get = adminCommand({
  name: "bundle get",
  summary: "show a bundle's rollout: per-cluster states, partitions, counts",
  description: [
    "Shows each target cluster's state, partition, released and applied revisions, and why it is",
    "held when it waits for the current revision; then the partitions in rollout order with their",
    "limits, and the counts.",
  ].join("\n"),
  positionals: [NAME],
  options: {
    all: {
      type: "boolean",
      description: 'list every unassigned cluster instead of "… and N more"',
    },
  },
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("getBundle", { name });
    if (ctx.json) printJson(ctx.io, answer);
    else
      printLines(
        ctx.io,
        bundleDetail(
          answer,
          present(answer.bundle, "bundle"),
          { ...ctx.render, all: ctx.args.flag("all") },
          ctx.io.now(),
        ),
      );
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: "bundle delete",
  summary: "delete a bundle",
  description:
    "Deletes the bundle from the hub; it is no longer rolled out to any cluster.",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("deleteBundle", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, answer);
    else printLines(ctx.io, [`Bundle ${name} deleted.`]);
    return EXIT_OK;
  },
});

function pauseCommand(paused: boolean) {
  const verb = paused ? "pause" : "resume";
  return adminCommand({
    name: `bundle ${verb}`,
    summary: paused
      ? "pause a bundle: no cluster gets a new revision of it"
      : "resume a paused bundle: its rollout goes on",
    description: paused
      ? [
          "Pauses the bundle's rollout (the stored paused, as fleet.yaml's paused: true): no cluster",
          "is released a revision it does not hold yet; clusters keep the revision they have. No new",
          "revision is made. A later bundle apply sets paused from its fleet.yaml again.",
        ].join("\n")
      : "Resumes the bundle's rollout: the next passes release its current revision again.",
    positionals: [NAME],
    mutating: true,
    prepare: (args) => prepared(args.positional("NAME") ?? ""),
    run: async (ctx, name) => {
      const request = { name, reason: ctx.reason };
      const answer = paused
        ? await ctx.hub.call("pauseBundle", request)
        : await ctx.hub.call("resumeBundle", request);
      if (ctx.json) {
        printJson(ctx.io, answer);
        return EXIT_OK;
      }
      const bundle = present(answer.bundle, "bundle");
      const revision = `(revision ${shortRevision(bundle.revision)})`;
      const done = paused ? "paused" : "resumed";
      printLines(ctx.io, [
        answer.changed
          ? `Bundle ${name} ${done} ${revision}.`
          : `Bundle ${name} was ${paused ? "paused" : "not paused"} already ${revision}.`,
      ]);
      return EXIT_OK;
    },
  });
}

const redeploy = adminCommand({
  name: "bundle redeploy",
  summary: "make the agents apply a bundle again, even if nothing changed",
  description: [
    "The agents of the given clusters (every target when no --cluster is given) that hold the",
    "bundle apply the revision they hold again, as Fleet's forceSyncGeneration does: objects",
    "changed by hand are restored. No new revision is made (docs/semantics.md#redeploying-a-bundle).",
  ].join("\n"),
  positionals: [NAME],
  options: {
    cluster: {
      type: "string",
      valueName: "CLUSTER",
      multiple: true,
      description: "redeploy only on this target (repeatable)",
    },
  },
  mutating: true,
  prepare: (args) =>
    prepared({
      name: args.positional("NAME") ?? "",
      clusters: [...args.strings("cluster")],
    }),
  run: async (ctx, input) => {
    const answer = await ctx.hub.call("redeployBundle", {
      ...input,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const bundle = present(answer.bundle, "bundle");
    const where =
      input.clusters.length === 0
        ? "every target holding it"
        : input.clusters.join(", ");
    printLines(ctx.io, [
      `Bundle ${input.name} redeployed on ${where} (revision ${shortRevision(bundle.revision)}).`,
    ]);
    return EXIT_OK;
  },
});

const history = adminCommand({
  name: "bundle history",
  summary: "list the revisions a bundle keeps to roll back to",
  description: [
    "Lists the bundle's current revision, then the earlier revisions the hub keeps (hub flag",
    "--bundle-revision-history, default 10), newest first: when each was stored, and whether it was",
    "good (a pass saw every target Ready at it) (docs/semantics.md#rolling-back-a-bundle).",
  ].join("\n"),
  positionals: [NAME],
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("getBundle", { name });
    const bundle = present(answer.bundle, "bundle");
    if (ctx.json) {
      printJson(ctx.io, {
        name,
        revisions: answer.revisions,
        ...compact({ rolledBack: bundle.rolledBack ?? undefined }),
      });
      return EXIT_OK;
    }
    const now = ctx.io.now();
    printLines(ctx.io, [
      ...revisionTable(answer.revisions, ctx.render, now),
      ...(bundle.rolledBack == null
        ? []
        : ["", `Bundle ${name} ${rollbackLine(bundle.rolledBack, now, true)}`]),
    ]);
    return EXIT_OK;
  },
});

const rollback = adminCommand({
  name: "bundle rollback",
  summary: "make an earlier revision of a bundle current again",
  description: [
    "Makes an earlier revision current again (default: the newest earlier revision that was good,",
    "else the newest earlier one). The clusters holding the current revision get it back as a new",
    "intent generation, paced by the bundle's maxUnavailable (clusters still failing at the current",
    "revision do not count), or all at once with --all-at-once. Clusters that never got the current",
    "revision are not touched. The revision rolled back from is not released again until a new",
    "bundle apply; a GitRepo sync of the same content does not bring it back. Needs the operator",
    "role (docs/semantics.md#rolling-back-a-bundle).",
  ].join("\n"),
  positionals: [NAME],
  options: {
    to: {
      type: "string",
      valueName: "REVISION",
      description:
        "the revision to roll back to, or a prefix of it that names one (see bundle history)",
    },
    "all-at-once": {
      type: "boolean",
      description:
        "release every cluster holding the current revision at once instead of pacing by maxUnavailable",
    },
  },
  mutating: true,
  prepare: (args) =>
    prepared({
      name: args.positional("NAME") ?? "",
      toRevision: args.string("to") ?? "",
      allAtOnce: args.flag("all-at-once"),
    }),
  run: async (ctx, input) => {
    const answer = await ctx.hub.call("rollbackBundle", {
      ...input,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const bundle = present(answer.bundle, "bundle");
    const rolled = bundle.rolledBack;
    const pace = input.allAtOnce
      ? "all at once"
      : "paced by the bundle's maxUnavailable";
    printLines(ctx.io, [
      rolled == null
        ? `Bundle ${input.name} rolled back to revision ${shortRevision(bundle.revision)}.`
        : `Bundle ${input.name} rolled back from ${shortRevision(rolled.fromRevision)} to ${shortRevision(rolled.toRevision)}: ${String(rolled.clustersTouched)} cluster(s) holding ${shortRevision(rolled.fromRevision)} move back, ${pace}.`,
      `Follow it with: flotilla bundle get ${input.name}`,
    ]);
    return EXIT_OK;
  },
});

/** `flotilla bundle …`. */
export const bundleNoun: Noun = {
  name: "bundle",
  summary: "apply, inspect, pause and delete bundles of manifests",
  verbs: [
    apply,
    list,
    get,
    remove,
    pauseCommand(true),
    pauseCommand(false),
    redeploy,
    history,
    rollback,
    render,
  ],
};

/**
 * What an apply says of the staged run driving the bundle: the run the hub made of a staged
 * bundle's new revision (docs/semantics.md#staged-bundles), or the run the new revision waits for.
 */
function runLines(bundle: wire.Bundle__Output, changed: boolean): string[] {
  const run = bundle.updateRun;
  if (run === undefined) return [];
  const staged = bundle.spec?.updateStrategyName !== undefined;
  return [
    staged && changed
      ? `  Rolling out through staged run ${run} (flotilla run status ${run})`
      : `  Driven by staged run ${run}${changed ? ": this revision waits until it ends" : ""} (flotilla run status ${run})`,
  ];
}
