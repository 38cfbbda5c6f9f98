/**
 * Publishes the intent changes core decided for a run (core's `step` returns them with each step;
 * `runIntents` gives them for a stored run). Nothing here decides what a member's intent holds:
 * this only writes it. An unchanged intent keeps its generation, so publishing the same change
 * again is harmless.
 */
import {
  runBundleReleases,
  runIntents,
  type IntentChanges,
  type Run,
} from "@flotilla/core";
import type { RunBundles } from "./run-bundles.js";
import type { Fence } from "../intents/intent-fences.js";
import type { IntentWriter } from "../intents/intent-writer.js";

/**
 * Publishes each cluster's changes, all clusters at once; a cluster whose intent cannot be written
 * is handed to `failed` and the others go on.
 */
export async function publishChanges(
  changes: IntentChanges,
  intents: IntentWriter,
  failed: (member: string, error: unknown) => void,
  fence?: Fence,
): Promise<void> {
  await Promise.all(
    [...changes].map(async ([member, list]) => {
      try {
        await intents.change(member, list, { fence });
      } catch (error) {
        failed(member, error);
      }
    }),
  );
}

/**
 * Republishes what the stored run implies for its members' intents (core's `runIntents`), for
 * intents that may lag after a crash. Stops at the first write that fails, with its error.
 */
export async function republishRun(
  run: Run,
  intents: IntentWriter,
  fence?: Fence,
  bundles?: RunBundles,
): Promise<void> {
  for (const [member, list] of runIntents(run)) {
    await intents.change(member, list, { fence });
  }
  const releases = runBundleReleases(run);
  if (releases.length === 0 || bundles === undefined) return;
  const failed = await bundles.releaseForRun(releases, fence);
  for (const error of failed.values()) throw error;
}
