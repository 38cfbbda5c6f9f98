/**
 * `flotilla hub status`: the hub itself, as an operator checks it: its live replicas (what each
 * serves and holds) and the health of the JetStream streams it keeps its state in
 * (docs/high-availability.md).
 */
import { EXIT_OK } from "../io.js";
import { adminCommand, prepared } from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";
import { hubStatusLines } from "../render/hub-status.js";
import type { Noun } from "./command.js";

const status = adminCommand({
  name: "hub status",
  summary: "show the hub's replicas and the health of its JetStream streams",
  description:
    "Lists the live hub replicas (address, version, uptime, agent sessions, the leases each holds\n" +
    "and whether it may take leases), then each JetStream stream the hub uses with its replica\n" +
    "count, leader, other copies and health (a copy offline or behind the leader, no leader).",
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const answer = await ctx.hub.call("getHubStatus", {});
    if (ctx.json) printJson(ctx.io, answer);
    else
      printLines(
        ctx.io,
        hubStatusLines(answer, ctx.io.now(), ctx.render.style),
      );
    return EXIT_OK;
  },
});

/** `flotilla hub …`. */
export const hubNoun: Noun = {
  name: "hub",
  summary: "look at the hub itself: its replicas and JetStream streams",
  verbs: [status],
};
