/**
 * Every `flotilla` subcommand. Adding one is a file in this folder and a line here.
 */
import type { Command } from "./command.js";
import { planCommand } from "./plan.js";
import { simulateCommand } from "./simulate.js";

/** The commands, in the order `flotilla help` lists them. */
export const COMMANDS: readonly Command[] = [planCommand, simulateCommand];

/** The command called `name`, if there is one. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}
