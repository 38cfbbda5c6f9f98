/**
 * Every `flotilla` command: the offline ones and `preview` at the top level, and the hub's
 * administration grouped by noun. Adding one is a file in this folder and a line here.
 */
import { adminCertNoun } from "./admin-cert.js";
import { auditNoun } from "./audit.js";
import { autoUpgradeProfileNoun } from "./auto-upgrade-profile.js";
import { bundleNoun } from "./bundle.js";
import { clusterNoun } from "./cluster.js";
import type { Command, Noun } from "./command.js";
import { configNoun } from "./config.js";
import { gateNoun } from "./gate.js";
import { gitRepoNoun } from "./gitrepo.js";
import { groupNoun } from "./group.js";
import { hubNoun } from "./hub.js";
import { planCommand } from "./plan.js";
import { previewCommand } from "./preview.js";
import { releaseNoun } from "./release.js";
import { versionsCommand } from "./versions.js";
import { runNoun } from "./run.js";
import { simulateCommand } from "./simulate.js";
import { strategyNoun } from "./strategy.js";
import { tokenNoun } from "./token.js";

/** The top-level commands, in the order `flotilla help` lists them. */
export const COMMANDS: readonly Command[] = [
  planCommand,
  simulateCommand,
  previewCommand,
  // The version catalogue (docs/cli.md#releases-and-versions).
  versionsCommand,
];

/** The nouns of hub administration, in the order `flotilla help` lists them. */
export const NOUNS: readonly Noun[] = [
  clusterNoun,
  groupNoun,
  strategyNoun,
  bundleNoun,
  // Git repositories as a bundle source (docs/cli.md#git-repositories).
  gitRepoNoun,
  runNoun,
  // Auto-upgrade profiles (docs/cli.md#auto-upgrade-profiles).
  autoUpgradeProfileNoun,
  gateNoun,
  // The version catalogue (docs/cli.md#releases-and-versions).
  releaseNoun,
  auditNoun,
  tokenNoun,
  adminCertNoun,
  hubNoun,
  configNoun,
];

/** The top-level command called `name`, if there is one. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** The noun called `name`, if there is one. */
export function findNoun(name: string): Noun | undefined {
  return NOUNS.find((n) => n.name === name);
}
