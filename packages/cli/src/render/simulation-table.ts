/**
 * `flotilla simulate` for people: the timeline, a progress bar per wave, the members that did not
 * succeed with their reasons, and the final state with the simulated duration.
 */
import { formatDuration } from "./duration.js";
import { count, DOT } from "./limits.js";
import type { RenderOptions } from "./options.js";
import type {
  SimulatedGroup,
  SimulatedMember,
  SimulatedWave,
  SimulationOutput,
} from "./preview-types.js";
import { BAR_WIDTH, progressBar } from "./progress-bar.js";
import { unassignedLines, warningLines } from "./sections.js";
import { styleState, visibleLength } from "./style.js";
import { renderTimeline } from "./timeline.js";
import { changedTargetLines, upgradePlanLines } from "./upgrade-plan.js";
import { DEFAULT_MAX_LINES, labelledList } from "./wrap.js";

/** Extra switches of the simulation view. */
export interface SimulationRenderOptions extends RenderOptions {
  readonly timeline: boolean;
}

/** The member state that counts as done: `Succeeded` in a staged run, `Ready` in a Fleet rollout. */
export function successState(dialect: SimulationOutput["dialect"]): string {
  return dialect === "fleet" ? "Ready" : "Succeeded";
}

// Worst first, so the eye lands on problems; untouched members last.
const STATE_ORDER = [
  "Failed",
  "ErrApplied",
  "NotReady",
  "Modified",
  "WaitApplied",
  "Running",
  "Pending",
  "Skipped",
  "OutOfSync",
  "NotStarted",
];

function stateRank(state: string): number {
  const rank = STATE_ORDER.indexOf(state);
  return rank === -1 ? STATE_ORDER.length : rank;
}

/** Member counts by state, the success state excluded, in display order. */
export function stateCounts(
  members: readonly SimulatedMember[],
  success: string,
): [string, number][] {
  const counts = new Map<string, number>();
  for (const m of members)
    if (m.state !== success)
      counts.set(m.state, (counts.get(m.state) ?? 0) + 1);
  return [...counts.entries()].sort(
    ([a], [b]) => stateRank(a) - stateRank(b) || (a < b ? -1 : a > b ? 1 : 0),
  );
}

/** `[████░░] 40/60 Succeeded · 1 Failed · 2 Skipped`; `cells` is the bar's width. */
export function progressLine(
  members: readonly SimulatedMember[],
  success: string,
  options: RenderOptions,
  cells = BAR_WIDTH,
): string {
  const done = members.filter((m) => m.state === success).length;
  const rest = stateCounts(members, success).map(
    ([state, n]) => `${String(n)} ${styleState(options.style, state)}`,
  );
  const bar = `${progressBar(done, members.length, cells)} ${String(done)}/${String(members.length)} ${success}`;
  return [bar, ...rest].join(DOT);
}

const MIN_BAR_WIDTH = 8;

const groupMembers = (wave: SimulatedWave): SimulatedMember[] =>
  wave.groups.flatMap((g) => g.members);

function progressSection(
  sim: SimulationOutput,
  options: RenderOptions,
): string[] {
  const success = successState(sim.dialect);
  const kind = sim.dialect === "fleet" ? "partition" : "stage";
  type Row = {
    name: string;
    state: string;
    members: readonly SimulatedMember[];
  };
  const rows: Row[] = [];
  const showGroups = (wave: SimulatedWave): boolean =>
    wave.groups.length > 1 || (wave.groups[0]?.name ?? wave.name) !== wave.name;
  for (const wave of sim.waves) {
    rows.push({
      name: `${kind} ${wave.name}`,
      state: wave.state,
      members: groupMembers(wave),
    });
    if (showGroups(wave)) {
      for (const g of wave.groups)
        rows.push({
          name: `  group ${g.name}`,
          state: g.state,
          members: g.members,
        });
    }
  }
  const nameWidth = Math.max(0, ...rows.map((r) => r.name.length));
  const stateWidth = Math.max(0, ...rows.map((r) => r.state.length));
  const head = (r: Row): string =>
    `  ${r.name.padEnd(nameWidth)}  ${styleState(options.style, r.state)}${" ".repeat(stateWidth - r.state.length)}  `;
  // One bar width for every row, so the bars line up: as wide as the longest line allows.
  const longest = Math.max(
    0,
    ...rows.map((r) =>
      visibleLength(head(r) + progressLine(r.members, success, options, 0)),
    ),
  );
  const cells = Math.min(
    BAR_WIDTH,
    Math.max(MIN_BAR_WIDTH, options.width - longest),
  );
  return rows.map(
    (r) => head(r) + progressLine(r.members, success, options, cells),
  );
}

/** States worth listing member by member: everything that is neither done nor untouched. */
const UNTOUCHED = new Set(["NotStarted", "OutOfSync", "Pending"]);

function memberSection(
  sim: SimulationOutput,
  options: RenderOptions,
): string[] {
  const success = successState(sim.dialect);
  const members = sim.waves.flatMap((w) =>
    w.groups.flatMap((g: SimulatedGroup) => g.members),
  );
  const byState = new Map<string, string[]>();
  for (const m of members) {
    if (
      m.state === success ||
      (UNTOUCHED.has(m.state) && m.reason === undefined)
    )
      continue;
    const list = byState.get(m.state) ?? [];
    // A reason that only repeats the state ("Failed (1): x (Failed)") says nothing.
    list.push(
      m.reason === undefined || m.reason === m.state
        ? m.name
        : `${m.name} (${m.reason})`,
    );
    byState.set(m.state, list);
  }
  const lines: string[] = [];
  const states = [...byState.keys()].sort(
    (a, b) => stateRank(a) - stateRank(b),
  );
  for (const state of states) {
    const names = byState.get(state) ?? [];
    const label = `${state} (${String(names.length)}): `;
    const wrapped = labelledList(label, names, {
      width: options.width,
      ...(options.all ? {} : { maxLines: DEFAULT_MAX_LINES }),
      indent: 2,
    });
    lines.push(
      ...wrapped.map((line, i) =>
        i === 0
          ? styleState(options.style, state) + line.slice(state.length)
          : line,
      ),
    );
  }
  return lines;
}

function finalLines(sim: SimulationOutput, options: RenderOptions): string[] {
  const state = `Final state: ${styleState(options.style, sim.finalState)}${DOT}${count(sim.failureCount, "failure")}`;
  const duration = formatDuration(sim.durationSeconds);
  const total = sim.truncated
    ? `Total: ${duration} (simulated; the rollout did not finish)`
    : `Total: ${duration} (simulated)`;
  return [options.style.bold(state), `${total}${DOT}${sim.start} → ${sim.end}`];
}

/** Renders a simulation as the text `flotilla simulate` prints (ends with a newline). */
export function renderSimulation(
  sim: SimulationOutput,
  options: SimulationRenderOptions,
): string {
  const what = sim.dialect === "fleet" ? "Fleet rollout" : "staged update run";
  const lines = [options.style.bold(`Simulation: ${what}, start ${sim.start}`)];
  // Decided before the start: Consistent's choice is shown before anything runs.
  if (sim.plan !== undefined)
    lines.push("", ...upgradePlanLines(sim.plan, options));
  if (options.timeline) {
    lines.push(
      "",
      "Timeline:",
      ...renderTimeline(sim.timeline, sim.start, options),
    );
  }
  lines.push("", "Progress:", ...progressSection(sim, options));
  const members = memberSection(sim, options);
  if (members.length > 0) lines.push("", ...members);
  const changed =
    sim.plan === undefined
      ? []
      : changedTargetLines(sim.plan, sim.waves.flatMap(groupMembers), options);
  if (changed.length > 0) lines.push("", ...changed);
  const extra = [
    ...unassignedLines(sim.unassigned, options),
    ...warningLines(sim.warnings, options),
  ];
  if (extra.length > 0) lines.push("", ...extra);
  lines.push("", ...finalLines(sim, options));
  return `${lines.join("\n")}\n`;
}
