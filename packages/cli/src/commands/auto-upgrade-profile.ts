/**
 * `flotilla autoupgradeprofile create|list|get|update|delete|generate-run`: auto-upgrade profiles
 * (docs/cli.md#auto-upgrade-profiles), as `az fleet autoupgradeprofile` has them. The hub makes
 * and starts a run of a profile's channel when the catalogue offers a new target; `generate-run`
 * makes that run now, without starting it.
 */
import type { wire } from "@flotilla/protocol";
import { EXIT_OK, EXIT_USAGE } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  type AdminContext,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import { fileProblemLines } from "../hub/file-problems.js";
import { EXPECTED_REVISION_OPTION } from "../hub/options.js";
import { printJson, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import { warningLines } from "../render/sections.js";
import { renderTable, type Column } from "../render/table.js";
import { formatAgo } from "../render/time.js";
import {
  checkProfile,
  PROFILE_OPTIONS,
  readProfileInput,
  specDocument,
  specToWire,
} from "./auto-upgrade-profile-input.js";
import { expectedRevision } from "./cluster.js";
import { formatProblem } from "@flotilla/core";
import type { Noun, PositionalSpec } from "./command.js";

const NOUN = "autoupgradeprofile";

const NAME: PositionalSpec = {
  name: "NAME",
  description: "the profile's name",
};

/** What a profile does now: its target and the run it makes, or why it makes none. */
function currentWords(profile: wire.AutoUpgradeProfile__Output): string {
  const current = profile.current;
  if (current === null) return "";
  if (current.skipReason !== "") return `no target: ${current.skipReason}`;
  const waits =
    current.waitingFor === ""
      ? ""
      : ` (waits for run ${current.waitingFor} to end)`;
  return `${current.description} → run ${current.run}${waits}`;
}

function profileLines(profile: wire.AutoUpgradeProfile__Output): string[] {
  const spec = present(profile.spec, "profile spec");
  const lines = [
    `Auto-upgrade profile ${profile.name} (revision ${String(profile.revision)})${spec.disabled ? " · disabled" : ""}`,
    `  Channel:               ${spec.channel}`,
  ];
  if (spec.targetKubernetesVersion != null)
    lines.push(`  Target minor:          ${spec.targetKubernetesVersion}`);
  if (spec.longTermSupport === true) lines.push("  Long-term support:     yes");
  lines.push(
    `  Update strategy:       ${spec.strategy === "" ? "(none: every member at once)" : spec.strategy}`,
    `  Node-image selection:  ${spec.nodeImageSelection}`,
    `  Now:                   ${currentWords(profile)}`,
    `  Last run made:         ${profile.lastRun === "" ? "(none)" : profile.lastRun}`,
  );
  return lines;
}

function printProfile(
  ctx: AdminContext,
  answer: { profile: wire.AutoUpgradeProfile__Output | null },
  verb: string,
): void {
  if (ctx.json) {
    printJson(ctx.io, answer);
    return;
  }
  const profile = present(answer.profile, "profile");
  const [first = "", ...rest] = profileLines(profile);
  printLines(ctx.io, [
    first.replace(/^(Auto-upgrade profile \S+)/, `$1 ${verb}`),
    ...rest,
  ]);
}

const create = adminCommand({
  name: `${NOUN} create`,
  summary: "store an auto-upgrade profile",
  description:
    "Stores a profile: when the version catalogue offers a new target for its channel, the hub\n" +
    "creates and starts one update run for it, with the profile's strategy (none: every member at\n" +
    "once). Give the fields as flags or in -f FILE (AKS's shape); flags win over the file.",
  positionals: [NAME],
  options: PROFILE_OPTIONS,
  mutating: true,
  prepare: async (args, io) => {
    const document = await readProfileInput(io, args);
    if (!document.ok) return refused(document.problems.map(formatProblem));
    const file = args.string("file");
    const spec = checkProfile(document.value, file);
    if (!spec.ok) return refused(spec.lines);
    return prepared({
      name: args.positional("NAME") ?? "",
      spec: spec.value,
      file,
    });
  },
  run: async (ctx, input) => {
    if (input.file !== undefined)
      ctx.problemLines(fileProblemLines(input.file, ["spec"]));
    const answer = await ctx.hub.call("createAutoUpgradeProfile", {
      name: input.name,
      spec: specToWire(input.spec),
      reason: ctx.reason,
    });
    printProfile(ctx, answer, "created");
    return EXIT_OK;
  },
});

const update = adminCommand({
  name: `${NOUN} update`,
  summary: "change an auto-upgrade profile",
  description:
    "Changes the fields given (as flags, or in -f FILE) and keeps the others. Runs the profile\n" +
    "already made are not touched; --disabled stops it making new ones.",
  positionals: [NAME],
  options: {
    ...PROFILE_OPTIONS,
    enabled: {
      type: "boolean",
      description: "make runs again (clears --disabled)",
    },
    ...EXPECTED_REVISION_OPTION,
  },
  mutating: true,
  prepare: (args) => {
    const revision = expectedRevision(`${NOUN} update`, args);
    if (!revision.ok) return refused(revision.problems.map(formatProblem));
    return prepared({
      name: args.positional("NAME") ?? "",
      args,
      revision: revision.value,
    });
  },
  run: async (ctx, input) => {
    const current = await ctx.hub.call("getAutoUpgradeProfile", {
      name: input.name,
    });
    const profile = present(current.profile, "profile");
    const document = await readProfileInput(
      ctx.io,
      input.args,
      specDocument(present(profile.spec, "profile spec")),
    );
    const file = input.args.string("file");
    const spec = document.ok ? checkProfile(document.value, file) : undefined;
    if (!document.ok || spec === undefined || !spec.ok) {
      const lines = !document.ok
        ? document.problems.map(formatProblem)
        : spec !== undefined && !spec.ok
          ? spec.lines
          : [];
      ctx.io.stderr(lines.map((l) => `flotilla: ${l}\n`).join(""));
      return EXIT_USAGE;
    }
    if (file !== undefined) ctx.problemLines(fileProblemLines(file, ["spec"]));
    const answer = await ctx.hub.call("updateAutoUpgradeProfile", {
      name: input.name,
      spec: specToWire(spec.value),
      expectedRevision: input.revision,
      reason: ctx.reason,
    });
    printProfile(ctx, answer, "updated");
    return EXIT_OK;
  },
});

const get = adminCommand({
  name: `${NOUN} get`,
  summary: "show an auto-upgrade profile",
  description:
    "Shows the profile's fields, the target its channel resolves to now with the run that target\n" +
    "makes, and the last run the hub made for it.",
  positionals: [NAME],
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("getAutoUpgradeProfile", { name });
    if (ctx.json) printJson(ctx.io, answer);
    else printLines(ctx.io, profileLines(present(answer.profile, "profile")));
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: `${NOUN} list`,
  summary: "list the auto-upgrade profiles",
  description:
    "Lists every profile with its channel, strategy and current target.",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const profiles = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listAutoUpgradeProfiles", { pageToken });
      return { items: page.profiles, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) printJson(ctx.io, { profiles });
    else if (profiles.length === 0)
      printLines(ctx.io, ["No auto-upgrade profiles."]);
    else {
      const nowMs = ctx.io.now();
      const spec = (p: wire.AutoUpgradeProfile__Output) =>
        present(p.spec, "profile spec");
      const columns: Column<wire.AutoUpgradeProfile__Output>[] = [
        { header: "NAME", cell: (p) => p.name },
        {
          header: "CHANNEL",
          cell: (p) => {
            const s = spec(p);
            return s.targetKubernetesVersion == null
              ? s.channel
              : `${s.channel} ${s.targetKubernetesVersion}${s.longTermSupport === true ? " (LTS)" : ""}`;
          },
        },
        { header: "STRATEGY", cell: (p) => spec(p).strategy || "-" },
        { header: "IMAGES", cell: (p) => spec(p).nodeImageSelection },
        { header: "ENABLED", cell: (p) => (spec(p).disabled ? "no" : "yes") },
        { header: "NOW", cell: currentWords },
        { header: "LAST RUN", cell: (p) => p.lastRun || "-" },
        { header: "UPDATED", cell: (p) => formatAgo(p.updatedAtMs, nowMs) },
      ];
      printLines(ctx.io, renderTable(columns, profiles, ctx.render.style));
    }
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: `${NOUN} delete`,
  summary: "delete an auto-upgrade profile",
  description: "Deletes the profile; the runs it made stay as they are.",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("deleteAutoUpgradeProfile", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) printJson(ctx.io, answer);
    else printLines(ctx.io, [`Auto-upgrade profile ${name} deleted.`]);
    return EXIT_OK;
  },
});

const generateRun = adminCommand({
  name: `${NOUN} generate-run`,
  summary: "create the run of a profile's current target now (not started)",
  description:
    "Creates the update run the profile's channel resolves to now, without starting it\n" +
    "(az fleet autoupgradeprofile generate-update-run). Its name comes from the profile and the\n" +
    "target, so asking again returns the same run.",
  positionals: [NAME],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, profile) => {
    const answer = await ctx.hub.call("generateUpdateRun", {
      profile,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const run = present(answer.run, "run");
    const target = run.origin?.target ?? "";
    printLines(ctx.io, [
      answer.created
        ? `Run ${run.name} created from auto-upgrade profile ${profile} (target ${target}); start it with: flotilla run start ${run.name}`
        : `Run ${run.name} of auto-upgrade profile ${profile} (target ${target}) exists already.`,
      ...warningLines(answer.warnings, ctx.render),
    ]);
    return EXIT_OK;
  },
});

/** `flotilla autoupgradeprofile …`. */
export const autoUpgradeProfileNoun: Noun = {
  name: NOUN,
  summary:
    "auto-upgrade profiles: channels that create update runs by themselves",
  verbs: [create, list, get, update, remove, generateRun],
};
