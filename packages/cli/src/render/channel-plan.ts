/**
 * `flotilla plan --channel` for people: what the profile resolves to, what every channel resolves
 * to with the same catalogue, then each member's target, unassigned clusters and warnings.
 */
import type { ChannelPlanOutput } from "@flotilla/core";
import type { RenderOptions } from "./options.js";
import { unassignedLines, warningLines } from "./sections.js";
import { upgradePlanLines, upgradeWords } from "./upgrade-plan.js";
import { wrapWords } from "./wrap.js";

type ChannelTarget = ChannelPlanOutput["channels"][number];

const MARK = "← this profile";

function resolvedWords(target: {
  readonly upgrade?: ChannelTarget["upgrade"];
  readonly reason?: string;
}): string {
  if (target.upgrade === undefined)
    return `no upgrade: ${target.reason ?? "nothing to upgrade to"}`;
  return upgradeWords(target.upgrade);
}

/** Renders a channel plan as `flotilla plan --channel` prints it (ends with a newline). */
export function renderChannelPlan(
  out: ChannelPlanOutput,
  options: RenderOptions,
): string {
  const { profile } = out;
  const name = [
    profile.channel,
    ...(profile.targetKubernetesVersion === undefined
      ? []
      : [profile.targetKubernetesVersion]),
    ...(profile.longTermSupport === true ? ["(long-term support)"] : []),
  ].join(" ");
  const head = wrapWords(
    `Auto-upgrade channel ${name}: ${resolvedWords(out)}`,
    options.width,
  );
  const lines = [
    options.style.bold(head[0] ?? ""),
    ...head.slice(1).map((l) => `  ${l}`),
  ];
  const nameWidth = Math.max(...out.channels.map((c) => c.channel.length));
  lines.push("", "Channels with this catalogue:");
  const width = options.width - nameWidth - 4;
  for (const c of out.channels) {
    const text = wrapWords(resolvedWords(c), width);
    if (c.channel === profile.channel) {
      const last = text.length - 1;
      const marked = `${text[last] ?? ""}  ${MARK}`;
      if (marked.length <= width) text[last] = marked;
      else text.push(MARK);
    }
    text.forEach((t, i) => {
      lines.push(`  ${(i === 0 ? c.channel : "").padEnd(nameWidth)}  ${t}`);
    });
  }
  if (out.plan !== undefined)
    lines.push("", ...upgradePlanLines(out.plan, options));
  const extra = [
    ...unassignedLines(out.unassigned, options),
    ...warningLines(out.warnings, options),
  ];
  if (extra.length > 0) lines.push("", ...extra);
  return `${lines.join("\n")}\n`;
}
