/**
 * Removing a run from the store (`flotilla run delete`, docs/cli.md#runs): its head first, so the
 * run is gone for every reader at once, then its journal slots and snapshot parts (see run-log.ts
 * for the keys). A hub that stops between the two leaves records without a head, which loading
 * ignores; they are dropped before a run of the same name is created again, so a new run never
 * replays an old run's journal.
 */
import type { Logger } from "pino";
import { runHeadKey, runRecordsPrefix } from "../store/keys.js";
import type { StateStore } from "../store/state-store.js";
import { RUN_LOG } from "./run-log.js";

/** Deletes the run's head, then every record under it. */
export async function removeRun(
  store: StateStore,
  name: string,
  logger: Logger,
): Promise<void> {
  await store.delete(RUN_LOG, runHeadKey(name));
  await dropRecords(store, name, logger);
}

/**
 * Deletes the records a run named `name` left behind without a head (a deletion that did not
 * finish). Call only when no run of that name exists.
 */
export async function dropRecords(
  store: StateStore,
  name: string,
  logger: Logger,
): Promise<void> {
  const records = await store.list(RUN_LOG, {
    prefix: runRecordsPrefix(name),
  });
  for (const record of records) {
    await store.delete(RUN_LOG, record.key);
  }
  if (records.length > 0)
    logger.debug(
      { run: name, records: records.length },
      "dropped the stored records of a deleted run",
    );
}
