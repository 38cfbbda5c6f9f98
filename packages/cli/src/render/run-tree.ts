/**
 * `flotilla run status` for people: a tree of stages → groups → members with their states,
 * progress bars, failure counts against budgets, gates (pending ones highlighted with the command
 * that completes them) and waits; then the run's state line and what to do next. Groups with many
 * members are folded into counts per state unless every member is asked for.
 */
import type { Gate } from "@flotilla/core";
import type {
  GroupView,
  MemberView,
  RunView,
  StageView,
} from "@flotilla/protocol";
import { formatDuration } from "./duration.js";
import { count, DOT } from "./limits.js";
import type { RenderOptions } from "./options.js";
import { progressBar } from "./progress-bar.js";
import {
  concurrencyWords,
  failureWords,
  gateCommand,
  gateDetail,
  gateTitle,
  memberFacts,
  payloadWords,
  waitWords,
} from "./run-words.js";
import { unassignedLines } from "./sections.js";
import { styleState } from "./style.js";
import { formatInstant } from "./time.js";
import { renderTree, type TreeNode } from "./tree.js";
import { DEFAULT_MAX_LINES, labelledList } from "./wrap.js";

/** Members per group shown one by one; larger groups are folded into counts per state. */
export const MAX_LISTED_MEMBERS = 20;

/** How to render a run. */
export interface RunRenderOptions extends RenderOptions {
  /** List every member even in large groups (`--members`). */
  readonly members: boolean;
  /** The caller's clock, for "in 2h" and "5m ago". */
  readonly nowMs: number;
  /** The hub replica driving the run; absent or empty: not shown (a hub without replicas). */
  readonly owner?: string;
}

const BAR_CELLS = 10;

// Worst first, so problems are seen first; untouched members last.
const MEMBER_STATES = [
  "Failed",
  "Running",
  "Pending",
  "Succeeded",
  "Skipped",
  "NotStarted",
] as const;

function stateCounts(
  members: readonly MemberView[],
  options: RenderOptions,
  states: readonly string[] = MEMBER_STATES,
): string[] {
  return states.flatMap((state) => {
    const n = members.filter((m) => m.state === state).length;
    return n === 0 ? [] : [`${String(n)} ${styleState(options.style, state)}`];
  });
}

/** `[███░░░░░░░] 3/10 done` where done is Succeeded or Skipped. */
function progress(members: readonly MemberView[]): string {
  const done = members.filter(
    (m) => m.state === "Succeeded" || m.state === "Skipped",
  ).length;
  return `${progressBar(done, members.length, BAR_CELLS)} ${String(done)}/${String(members.length)}`;
}

/** `title  fact · fact`, the facts wrapped under the first one when the line is too long. */
function factsLabel(
  title: string,
  facts: readonly string[],
  options: RenderOptions,
): (width: number) => string[] {
  const head = `${title}  `;
  return (width) =>
    labelledList(head, facts, {
      width,
      separator: DOT,
      markContinuation: false,
      indent: head.length,
    }).map((line, i) =>
      i === 0 ? options.style.bold(title) + line.slice(title.length) : line,
    );
}

function gateNode(
  run: string,
  gate: Gate,
  options: RunRenderOptions,
): TreeNode {
  const detail = gateDetail(run, gate, options.style, options.nowMs);
  return {
    label: gateTitle(gate, options.style),
    ...(detail.length === 0 ? {} : { body: () => detail }),
  };
}

function memberNode(m: MemberView, options: RunRenderOptions): TreeNode {
  const facts = memberFacts(m, options.style, options.nowMs);
  const head = `${m.name}  ${styleState(options.style, m.state)}`;
  return { label: facts.length === 0 ? head : `${head}  ${facts.join(DOT)}` };
}

/** A large group's members as counts, with the failed ones named. */
function foldedMembers(group: GroupView, options: RunRenderOptions): TreeNode {
  const failed = group.members
    .filter((m) => m.state === "Failed")
    .map((m) => m.name);
  return {
    label: `${count(group.members.length, "member")}: ${stateCounts(group.members, options).join(DOT)} (--members lists them)`,
    ...(failed.length === 0
      ? {}
      : {
          body: (width) =>
            labelledList("Failed: ", failed, {
              width,
              ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
            }).map((line, i) =>
              i === 0
                ? options.style.red("Failed: ") + line.slice("Failed: ".length)
                : line,
            ),
        }),
  };
}

function groupNode(
  run: string,
  group: GroupView,
  options: RunRenderOptions,
): TreeNode {
  const facts = [
    styleState(options.style, group.state),
    progress(group.members),
    // The bar counts the finished; these are the members that need attention or are moving.
    ...stateCounts(group.members, options, ["Failed", "Running", "Pending"]),
    ...[failureWords(group, options.style), concurrencyWords(group)].filter(
      (w) => w !== undefined,
    ),
    ...(group.skipRequested ? ["skip requested"] : []),
  ];
  const fold = !options.members && group.members.length > MAX_LISTED_MEMBERS;
  return {
    label: factsLabel(`group ${group.name}`, facts, options),
    children: [
      ...group.beforeGates.map((g) => gateNode(run, g, options)),
      ...(fold
        ? [foldedMembers(group, options)]
        : group.members.map((m) => memberNode(m, options))),
      ...group.afterGates.map((g) => gateNode(run, g, options)),
    ],
  };
}

function stageNode(
  run: RunView,
  stage: StageView,
  index: number,
  options: RunRenderOptions,
): TreeNode {
  const members = stage.groups.flatMap((g) => g.members);
  const facts = [
    styleState(options.style, stage.state),
    progress(members),
    ...[failureWords(stage, options.style), concurrencyWords(stage)].filter(
      (w) => w !== undefined,
    ),
    ...(stage.skipRequested ? ["skip requested"] : []),
  ];
  const wait = waitWords(stage, options.nowMs);
  const current =
    index === run.currentStage && index < run.stages.length ? " ◀" : "";
  return {
    label: factsLabel(`stage ${stage.name}${current}`, facts, options),
    children: [
      ...stage.beforeGates.map((g) => gateNode(run.name, g, options)),
      ...stage.groups.map((g) => groupNode(run.name, g, options)),
      ...stage.afterGates.map((g) => gateNode(run.name, g, options)),
      ...(wait === undefined ? [] : [{ label: wait }]),
    ],
  };
}

/** Every gate of the run, in order. */
function allGates(run: RunView): Gate[] {
  return run.stages.flatMap((s) => [
    ...s.beforeGates,
    ...s.groups.flatMap((g) => [...g.beforeGates, ...g.afterGates]),
    ...s.afterGates,
  ]);
}

/** `State: Running · 1 failure · stage canary (1 of 3)`, and why it halted. */
export function stateLine(run: RunView, options: RenderOptions): string {
  const words = [
    `State: ${styleState(options.style, run.state)}`,
    count(run.failureCount, "failure"),
  ];
  const stage = run.stages[run.currentStage];
  if (stage !== undefined && run.state !== "NotStarted")
    words.push(
      `stage ${stage.name} (${String(run.currentStage + 1)} of ${String(run.stages.length)})`,
    );
  if (run.budgetExceeded)
    words.push(options.style.red("a failure budget was exceeded"));
  if (run.stopRequested && run.state !== "Stopped")
    words.push("stop requested");
  if (run.message !== "") words.push(run.message);
  return words.join(DOT);
}

function nextSteps(run: RunView, options: RunRenderOptions): string[] {
  const commands = new Set<string>();
  for (const gate of allGates(run))
    if (gate.state === "Pending") commands.add(gateCommand(run.name, gate));
  if (run.state === "NotStarted")
    commands.add(`flotilla run start ${run.name}`);
  const failed = run.stages.some((s) =>
    s.groups.some((g) => g.members.some((m) => m.state === "Failed")),
  );
  if (failed && (run.state === "Failed" || run.budgetExceeded))
    commands.add(`flotilla run retry ${run.name}`);
  if (commands.size === 0) return [];
  return [
    "",
    "Next:",
    ...[...commands].map((c) => `  ${options.style.yellow(c)}`),
  ];
}

/** The lines `flotilla run status` prints for `run`. */
export function renderRunStatus(
  run: RunView,
  options: RunRenderOptions,
): string[] {
  const times = [`created ${formatInstant(run.createdAtMs)}`];
  if (run.startedAtMs !== undefined)
    times.push(`started ${formatInstant(run.startedAtMs)}`);
  if (run.finishedAtMs !== undefined)
    times.push(`finished ${formatInstant(run.finishedAtMs)}`);
  const lines = [
    options.style.bold(`Run ${run.name}`) + `  ${payloadWords(run.payload)}`,
    `${times.join(DOT)}${DOT}progress deadline ${formatDuration(run.progressDeadlineSeconds)} per member`,
  ];
  if (options.owner !== undefined && options.owner !== "")
    lines.push(`Driven by hub replica ${options.owner}`);
  if (run.origin !== undefined) {
    const { origin } = run;
    const how =
      origin.createdBy === "hub" ? "Created by" : "Generated on request from";
    lines.push(
      `${how} auto-upgrade profile ${origin.profile} (channel ${origin.channel}, target ${origin.target})`,
    );
  }
  const images = run.consistentNodeImages;
  if (images !== undefined)
    lines.push(
      `Node images (Consistent): ${Object.entries(images)
        .map(([family, version]) => `${family} ${version}`)
        .join(", ")}`,
    );
  lines.push(
    ...renderTree(
      run.stages.map((s, i) => stageNode(run, s, i, options)),
      options.width,
    ),
  );
  lines.push(stateLine(run, options));
  if (run.haltMessage !== undefined)
    lines.push(options.style.red(run.haltMessage));
  const unassigned = unassignedLines(run.unassigned, options);
  if (unassigned.length > 0) lines.push(...unassigned);
  lines.push(...nextSteps(run, options));
  return lines;
}
