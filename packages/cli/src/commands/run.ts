/**
 * `flotilla run …`: staged update runs. create and status live in their own files; here are the
 * operator's actions (start, stop, skip, retry, approve, complete-gate) and the list; delete has its
 * own file too.
 */
import type { SkipTarget } from "@flotilla/core";
import type { wire } from "@flotilla/protocol";
import { RUN_STATE } from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
  type AdminContext,
} from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import { progressBar } from "../render/progress-bar.js";
import { stateLine } from "../render/run-tree.js";
import { styleState } from "../render/style.js";
import { renderTable, type Column } from "../render/table.js";
import { formatAge } from "../render/time.js";
import type { Noun, PositionalSpec } from "./command.js";
import { runCreateCommand } from "./run-create.js";
import { decodeRun } from "./run-decode.js";
import { GATE_ID } from "./gate.js";
import { runDeleteCommand } from "./run-delete.js";
import { runStatusCommand } from "./run-status.js";
import { parseSkipTargets } from "./skip-targets.js";

const NAME: PositionalSpec = { name: "NAME", description: "the run's name" };

/** Prints the run an action answered with: its state line, or the response as JSON. */
function printRunAnswer(
  ctx: AdminContext,
  answer: { run: wire.RunStatus__Output | null },
  done: string,
): void {
  if (ctx.json) {
    printJson(ctx.io, answer);
    return;
  }
  const run = decodeRun(answer.run);
  printLines(ctx.io, [done, `  ${stateLine(run, ctx.render)}`]);
}

/** An action on a run named by NAME with only a reason: start and stop. */
function simpleAction(
  verb: "start" | "stop",
  summary: string,
  description: string,
  method: "startUpdateRun" | "stopUpdateRun",
) {
  return adminCommand({
    name: `run ${verb}`,
    summary,
    description,
    positionals: [NAME],
    mutating: true,
    prepare: (args) => prepared(args.positional("NAME") ?? ""),
    run: async (ctx, name) => {
      const answer = await ctx.hub.call(method, { name, reason: ctx.reason });
      printRunAnswer(
        ctx,
        answer,
        `Run ${name}: ${verb === "start" ? "started" : "stop requested"}.`,
      );
      return EXIT_OK;
    },
  });
}

const start = simpleAction(
  "start",
  "start a run, or resume a stopped or failed one",
  "Starts the run; a Stopped or Failed run resumes with its first unprocessed member.\nFailed members are not retried (see flotilla run retry).",
  "startUpdateRun",
);

const stop = simpleAction(
  "stop",
  "stop a run: in-flight members finish, nothing new starts",
  "Stops the run: members in flight finish, nothing new starts (Stopping, then Stopped).",
  "stopUpdateRun",
);

const skip = adminCommand({
  name: "run skip",
  summary: "skip stages, groups or members of a run",
  description:
    "Skips the named stages, groups and members; their gates become Skipped.\n" +
    "--targets takes az fleet's form: Stage:S,Group:G,Member:M (several, comma-separated).",
  positionals: [NAME],
  options: {
    targets: {
      type: "string",
      valueName: "TYPE:NAME,…",
      multiple: true,
      description:
        "what to skip as az fleet names it: Stage:S, Group:G or Member:M, comma-separated; repeatable",
    },
    stage: {
      type: "string",
      valueName: "S",
      multiple: true,
      description: "a stage to skip; repeatable",
    },
    group: {
      type: "string",
      valueName: "G",
      multiple: true,
      description: "a group to skip; repeatable",
    },
    member: {
      type: "string",
      valueName: "M",
      multiple: true,
      description: "a member (cluster) to skip; repeatable",
    },
  },
  mutating: true,
  prepare: (args) => {
    const targets = parseSkipTargets(args.strings("targets"));
    if (!targets.ok)
      return refused(
        targets.problems.map((p) => usageMessage("run skip", p.message)),
      );
    const named = (type: SkipTarget["type"]): string[] =>
      targets.value.filter((t) => t.type === type).map((t) => t.name);
    const request = {
      name: args.positional("NAME") ?? "",
      stages: [...args.strings("stage"), ...named("Stage")],
      groups: [...args.strings("group"), ...named("Group")],
      members: [...args.strings("member"), ...named("Member")],
    };
    if (
      request.stages.length + request.groups.length + request.members.length ===
      0
    )
      return refused([
        usageMessage(
          "run skip",
          "name what to skip: --targets TYPE:NAME,…, --stage S, --group G or --member M",
        ),
      ]);
    return prepared(request);
  },
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("skipUpdateRunTargets", {
      ...request,
      reason: ctx.reason,
    });
    const what = [
      ...request.stages.map((s) => `stage ${s}`),
      ...request.groups.map((g) => `group ${g}`),
      ...request.members.map((m) => `member ${m}`),
    ];
    printRunAnswer(
      ctx,
      answer,
      `Run ${request.name}: skipped ${what.join(", ")}.`,
    );
    return EXIT_OK;
  },
});

const retry = adminCommand({
  name: "run retry",
  summary: "retry failed members of a run",
  description:
    "Retries the named failed members, or every failed member of the current stage.",
  positionals: [NAME],
  options: {
    member: {
      type: "string",
      valueName: "M",
      multiple: true,
      description:
        "a failed member to retry; repeatable (default: all of the current stage)",
    },
  },
  mutating: true,
  prepare: (args) =>
    prepared({
      name: args.positional("NAME") ?? "",
      members: [...args.strings("member")],
    }),
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("retryUpdateRunMembers", {
      ...request,
      reason: ctx.reason,
    });
    const what =
      request.members.length === 0
        ? "the failed members of the current stage"
        : request.members.join(", ");
    printRunAnswer(ctx, answer, `Run ${request.name}: retrying ${what}.`);
    return EXIT_OK;
  },
});

function gateAction(
  verb: "approve" | "complete-gate",
  summary: string,
  description: string,
) {
  return adminCommand({
    name: `run ${verb}`,
    summary,
    description,
    positionals: [
      { name: "RUN", description: "the run's name" },
      {
        name: "GATE_ID",
        description:
          "stage:NAME:before|after or group:NAME:before|after (run status shows it)",
      },
    ],
    mutating: true,
    prepare: (args) => {
      const gateId = args.positional("GATE_ID") ?? "";
      if (!GATE_ID.test(gateId))
        return refused([
          usageMessage(
            `run ${verb}`,
            `gate id must be stage:NAME:before|after or group:NAME:before|after (got "${gateId}")`,
          ),
        ]);
      return prepared({ run: args.positional("RUN") ?? "", gateId });
    },
    run: async (ctx, request) => {
      const answer =
        verb === "approve"
          ? await ctx.hub.call("approveGate", {
              ...request,
              reason: ctx.reason,
            })
          : await ctx.hub.call("completeGate", {
              ...request,
              reason: ctx.reason,
            });
      printRunAnswer(
        ctx,
        answer,
        `Run ${request.run}: gate ${request.gateId} ${verb === "approve" ? "approved" : "completed"}.`,
      );
      return EXIT_OK;
    },
  });
}

const approve = gateAction(
  "approve",
  "approve a pending approval gate",
  "Approves the gate (all gates sharing its id); your identity and reason are recorded.",
);

const completeGate = gateAction(
  "complete-gate",
  "complete a pending gate now (approval or scheduled start)",
  "Completes a pending gate at once: an Approval, or a ScheduledStart before its time.",
);

function membersOf(r: wire.RunSummary__Output): wire.MemberCounts__Output {
  return (
    r.members ?? {
      total: 0,
      notStarted: 0,
      pending: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      skipped: 0,
    }
  );
}

const list = adminCommand({
  name: "run list",
  summary: "list runs with their state and progress",
  description:
    "Lists runs: state, current stage, progress (members finished: succeeded, failed or skipped),\n" +
    "member counts and age.",
  options: {
    state: {
      type: "string",
      valueName: "STATE",
      multiple: true,
      choices: RUN_STATE.values,
      description: "only runs in this state; repeatable",
    },
  },
  prepare: (args) =>
    prepared(
      args
        .strings("state")
        .map((s) => RUN_STATE.toWire(s as (typeof RUN_STATE.values)[number])),
    ),
  run: async (ctx, states) => {
    const runs = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listUpdateRuns", { states, pageToken });
      return { items: page.runs, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) {
      printJson(ctx.io, { runs });
      return EXIT_OK;
    }
    if (runs.length === 0) {
      printLines(ctx.io, ["No runs."]);
      return EXIT_OK;
    }
    const nowMs = ctx.io.now();
    const columns: Column<wire.RunSummary__Output>[] = [
      { header: "NAME", cell: (r) => r.name },
      {
        header: "STATE",
        cell: (r) =>
          styleState(ctx.render.style, RUN_STATE.fromWire(r.state) ?? r.state),
      },
      { header: "STAGE", cell: (r) => r.currentStage ?? "-" },
      {
        header: "PROGRESS",
        cell: (r) => {
          const m = membersOf(r);
          return progressBar(m.succeeded + m.failed + m.skipped, m.total, 10);
        },
      },
      {
        header: "OK/FAILED/TOTAL",
        cell: (r) => {
          const m = membersOf(r);
          return `${String(m.succeeded)}/${String(m.failed)}/${String(m.total)}`;
        },
        align: "right",
      },
      { header: "AGE", cell: (r) => formatAge(r.createdAtMs, nowMs) },
    ];
    printLines(ctx.io, renderTable(columns, runs, ctx.render.style));
    return EXIT_OK;
  },
});

/** `flotilla run …`. */
export const runNoun: Noun = {
  name: "run",
  summary: "create, start, watch and steer staged update runs",
  verbs: [
    runCreateCommand,
    start,
    stop,
    skip,
    retry,
    approve,
    completeGate,
    list,
    runStatusCommand,
    runDeleteCommand,
  ],
};
