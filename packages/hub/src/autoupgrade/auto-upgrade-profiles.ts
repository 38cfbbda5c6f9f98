/**
 * Auto-upgrade profiles (docs/engine.md#auto-upgrade-profiles): stored in their own collection
 * ("auto-upgrade-profiles", one KV bucket with the hub's replica count), cached, and followed by
 * every replica so that each answers reads and the owner of the auto-upgrade lease sees changes
 * made through any replica. Each write is checked by core's parser first; nothing is stored
 * when it fails.
 */
import {
  autoUpgradeProfileField,
  FlotillaError,
  profileNameProblem,
  showValue,
  type AutoUpgradeProfileSpec,
} from "@flotilla/core";
import { z } from "zod";
import { nameKey } from "../store/keys.js";
import { defineCollection, type StateStore } from "../store/state-store.js";
import { createUpdateQueue } from "../store/update-queue.js";
import { followCollection } from "../store/follow-collection.js";

export interface ProfileRecord {
  readonly name: string;
  readonly spec: AutoUpgradeProfileSpec;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

const PROFILES = defineCollection<ProfileRecord>(
  "auto-upgrade-profiles",
  (value) =>
    z
      .object({
        name: z.string(),
        spec: autoUpgradeProfileField,
        createdAtMs: z.number(),
        updatedAtMs: z.number(),
      })
      .parse(value),
);

export interface StoredProfile {
  readonly record: ProfileRecord;
  readonly revision: number;
}

/** Throws `invalid_argument` (path `name`) unless `name` can name a profile. */
export function checkProfileName(name: string): void {
  const message = profileNameProblem(name);
  if (message !== undefined) {
    throw FlotillaError.invalid("auto-upgrade profile", [
      { path: "name", message, value: name },
    ]);
  }
}

export interface AutoUpgradeProfiles {
  start(): Promise<void>;
  get(name: string): StoredProfile;
  list(): StoredProfile[];
  create(name: string, spec: AutoUpgradeProfileSpec): Promise<StoredProfile>;
  update(
    name: string,
    spec: AutoUpgradeProfileSpec,
    expectedRevision?: number,
  ): Promise<StoredProfile>;
  delete(name: string): Promise<void>;
  /** Takes in profiles written through other hub replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
  /** Calls `listener` after every change, here or through another replica. */
  onChange(listener: () => void): void;
}

export function createAutoUpgradeProfiles(deps: {
  readonly store: StateStore;
  readonly now: () => number;
}): AutoUpgradeProfiles {
  const profiles = new Map<string, StoredProfile>();
  const listeners: (() => void)[] = [];
  const changed = (): void => {
    for (const listener of listeners) listener();
  };
  const updates = createUpdateQueue();
  const notFound = (name: string): FlotillaError =>
    new FlotillaError(
      "not_found",
      `Auto-upgrade profile ${showValue(name)} does not exist`,
    );
  const keep = (stored: StoredProfile): StoredProfile => {
    profiles.set(stored.record.name, stored);
    changed();
    return stored;
  };

  return {
    async start() {
      profiles.clear();
      for (const { value, revision } of await deps.store.list(PROFILES))
        profiles.set(value.name, { record: value, revision });
    },
    follow(signal) {
      return followCollection(deps.store, PROFILES, signal, {
        put(name, record, revision) {
          if ((profiles.get(name)?.revision ?? 0) >= revision) return;
          keep({ record, revision });
        },
        delete(name) {
          if (profiles.delete(name)) changed();
        },
        error: () => undefined,
      });
    },
    onChange(listener) {
      listeners.push(listener);
    },
    get(name) {
      const found = profiles.get(name);
      if (found === undefined) throw notFound(name);
      return found;
    },
    list() {
      return [...profiles.values()].sort((a, b) =>
        a.record.name < b.record.name ? -1 : 1,
      );
    },
    async create(name, spec) {
      checkProfileName(name);
      if (profiles.has(name)) {
        throw new FlotillaError(
          "already_exists",
          `Auto-upgrade profile ${showValue(name)} already exists`,
        );
      }
      const now = deps.now();
      const record = { name, spec, createdAtMs: now, updatedAtMs: now };
      const revision = await deps.store.put(PROFILES, nameKey(name), record, {
        expectedRevision: 0,
      });
      return keep({ record, revision });
    },
    async update(name, spec, expectedRevision) {
      checkProfileName(name);
      const key = nameKey(name);
      return updates.update(name, {
        what: `auto-upgrade profile ${showValue(name)}`,
        expectedRevision,
        write: async () => {
          const current = profiles.get(name);
          if (current === undefined) throw notFound(name);
          const record = {
            name,
            spec,
            createdAtMs: current.record.createdAtMs,
            updatedAtMs: deps.now(),
          };
          const revision = await deps.store.put(PROFILES, key, record, {
            expectedRevision: expectedRevision ?? current.revision,
          });
          return keep({ record, revision });
        },
        reload: async () => {
          const entry = await deps.store.get(PROFILES, key);
          if (entry === undefined) {
            profiles.delete(name);
            throw notFound(name);
          }
          profiles.set(name, { record: entry.value, revision: entry.revision });
        },
      });
    },
    async delete(name) {
      const current = profiles.get(name);
      if (current === undefined) throw notFound(name);
      await deps.store.delete(PROFILES, nameKey(name), {
        expectedRevision: current.revision,
      });
      profiles.delete(name);
      changed();
    },
  };
}
