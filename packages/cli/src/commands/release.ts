/**
 * `flotilla release add|list|remove`: releases an operator publishes to the hub for fleets whose
 * drivers cannot discover them (docs/cli.md#releases-and-versions). A Kubernetes release applies to
 * every cluster, a node-image release to every node pool of its family.
 */
import { RELEASE_KIND, type wire } from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
} from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";
import { renderTable, type Column } from "../render/table.js";
import { formatAge } from "../render/time.js";
import type { Noun, ParsedArgs, PositionalSpec } from "./command.js";

const KINDS = ["kubernetes", "node-image"] as const;

const POSITIONALS: readonly PositionalSpec[] = [
  { name: "KIND", description: "kubernetes or node-image" },
  {
    name: "ARGS",
    variadic: true,
    description: "kubernetes: VERSION; node-image: FAMILY VERSION",
  },
];

interface Target {
  readonly kind: wire.ReleaseKind;
  readonly family: string;
  readonly version: string;
}

/** `kubernetes VERSION` or `node-image FAMILY VERSION`; a usage message otherwise. */
function targetOf(verb: string, args: ParsedArgs): Target | string {
  const kind = args.positional("KIND") ?? "";
  const rest = args.positionals("ARGS");
  const usage = (why: string): string => usageMessage(`release ${verb}`, why);
  if (!(KINDS as readonly string[]).includes(kind))
    return usage(`KIND must be kubernetes or node-image (got "${kind}")`);
  const wireKind = RELEASE_KIND.toWire(kind as (typeof KINDS)[number]);
  if (kind === "kubernetes") {
    const [version] = rest;
    if (rest.length !== 1 || version === undefined)
      return usage(`release ${verb} kubernetes takes one VERSION, e.g. 1.30.4`);
    return { kind: wireKind, family: "", version };
  }
  const [family, version] = rest;
  if (rest.length !== 2 || family === undefined || version === undefined)
    return usage(
      `release ${verb} node-image takes FAMILY VERSION, e.g. ubuntu-22.04 202603.01.0`,
    );
  return { kind: wireKind, family, version };
}

/** `Kubernetes 1.30.4 (LTS)` or `node image ubuntu-22.04 202603.01.0`. */
export function describeRelease(r: wire.Release__Output): string {
  if (RELEASE_KIND.fromWire(r.kind) === "node-image")
    return `node image ${r.family} ${r.version}`;
  const marks = [r.lts ? "LTS" : "", r.preview ? "preview" : ""].filter(
    (m) => m !== "",
  );
  return `Kubernetes ${r.version}${marks.length === 0 ? "" : ` (${marks.join(", ")})`}`;
}

const add = adminCommand({
  name: "release add",
  summary: "publish a Kubernetes or node-image release to every cluster",
  description:
    "Publishes a release: `release add kubernetes 1.30.4 [--lts] [--preview]` offers that\n" +
    "Kubernetes version to every cluster; `release add node-image FAMILY VERSION` offers the image\n" +
    "to every node pool of the family. Publishing a version again replaces it (preview → GA).\n" +
    "A release older than what every cluster already runs is refused.",
  positionals: POSITIONALS,
  options: {
    lts: {
      type: "boolean",
      description: "a patch of a long-term-support minor (Kubernetes only)",
    },
    preview: {
      type: "boolean",
      description:
        "a preview version, never chosen by a channel (Kubernetes only)",
    },
  },
  mutating: true,
  prepare: (args) => {
    const target = targetOf("add", args);
    return typeof target === "string"
      ? refused([target])
      : prepared({
          ...target,
          lts: args.flag("lts"),
          preview: args.flag("preview"),
        });
  },
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("addRelease", {
      ...request,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const release = answer.release;
    printLines(ctx.io, [
      release === null
        ? "Published."
        : `Published ${describeRelease(release)}.`,
    ]);
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: "release remove",
  summary: "withdraw a published release",
  description:
    "Removes a release published with release add (`release remove kubernetes 1.30.4`,\n" +
    "`release remove node-image FAMILY VERSION`). Runs already created keep what they chose.",
  positionals: POSITIONALS,
  mutating: true,
  prepare: (args) => {
    const target = targetOf("remove", args);
    return typeof target === "string" ? refused([target]) : prepared(target);
  },
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("removeRelease", {
      ...request,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const release = answer.release;
    printLines(ctx.io, [
      release === null ? "Removed." : `Removed ${describeRelease(release)}.`,
    ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: "release list",
  summary: "list the releases published to the hub",
  description:
    "Lists the releases operators published: kind, image family, version, marks, who published\n" +
    "it and when. Versions each cluster's agent reports are shown by flotilla versions.",
  prepare: () => prepared({}),
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("listReleases", request);
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    if (answer.releases.length === 0) {
      printLines(ctx.io, ["No releases."]);
      return EXIT_OK;
    }
    const nowMs = ctx.io.now();
    const columns: Column<wire.Release__Output>[] = [
      { header: "KIND", cell: (r) => RELEASE_KIND.fromWire(r.kind) ?? r.kind },
      { header: "FAMILY", cell: (r) => r.family || "-" },
      { header: "VERSION", cell: (r) => r.version },
      {
        header: "MARKS",
        cell: (r) =>
          [r.lts ? "LTS" : "", r.preview ? "preview" : ""]
            .filter((m) => m !== "")
            .join(",") || "-",
      },
      { header: "BY", cell: (r) => r.addedBy || "-" },
      { header: "AGE", cell: (r) => formatAge(r.addedAtMs, nowMs) },
    ];
    printLines(ctx.io, renderTable(columns, answer.releases, ctx.render.style));
    return EXIT_OK;
  },
});

/** `flotilla release …`. */
export const releaseNoun: Noun = {
  name: "release",
  summary: "publish Kubernetes and node-image releases to the fleet",
  verbs: [add, list, remove],
};
