/**
 * `flotilla run delete NAME`: deletes a run that is not in flight (as `az fleet updaterun delete`).
 * The hub refuses a run that is started and not finished, and says so; stop it first
 * (docs/cli.md#runs).
 */
import { RUN_STATE } from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import { adminCommand, prepared } from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";

/** `flotilla run delete`. */
export const runDeleteCommand = adminCommand({
  name: "run delete",
  summary: "delete a run that is not started or has finished (stop it first)",
  description:
    "Deletes the run and everything stored for it. Refused while it is Running, Pending or Stopping:\n" +
    "stop it (flotilla run stop) and wait until it is Stopped. Members keep their intents as the\n" +
    "run left them.",
  positionals: [{ name: "NAME", description: "the run's name" }],
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("deleteUpdateRun", {
      name,
      reason: ctx.reason,
    });
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    const state = RUN_STATE.fromWire(answer.state) ?? answer.state;
    printLines(ctx.io, [`Run ${name} deleted (it was ${state}).`]);
    return EXIT_OK;
  },
});
