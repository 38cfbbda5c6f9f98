/**
 * Cluster groups (Fleet ClusterGroup): a named label selector over clusters, with labels of its
 * own for `clusterGroupSelector`. Stored in the "cluster-groups" collection and cached.
 */
import {
  FlotillaError,
  parseLabels,
  parseSelectorString,
  showValue,
  type ClusterGroup,
  type Labels,
  type Problem,
  compact,
} from "@flotilla/core";
import { z } from "zod";
import { nameKey } from "../store/keys.js";
import { defineCollection, type StateStore } from "../store/state-store.js";
import { createUpdateQueue } from "../store/update-queue.js";
import { followCollection } from "../store/follow-collection.js";
import { nameProblem } from "../names.js";

export interface ClusterGroupRecord {
  readonly name: string;
  readonly labels: Labels;
  /** Selector string (`env=prod,region in (eu)`); absent: the group selects nothing by label. */
  readonly selector?: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

const CLUSTER_GROUPS = defineCollection<ClusterGroupRecord>(
  "cluster-groups",
  (value) =>
    z
      .object({
        name: z.string(),
        labels: z.record(z.string(), z.string()),
        selector: z.string().optional(),
        createdAtMs: z.number(),
        updatedAtMs: z.number(),
      })
      .parse(value),
);

export interface StoredGroup {
  readonly record: ClusterGroupRecord;
  readonly group: ClusterGroup;
  readonly revision: number;
}

export interface GroupInput {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly selector?: string;
}

export interface ClusterGroups {
  start(): Promise<void>;
  all(): readonly ClusterGroup[];
  get(name: string): StoredGroup;
  list(): StoredGroup[];
  create(input: GroupInput): Promise<StoredGroup>;
  update(input: GroupInput, expectedRevision?: number): Promise<StoredGroup>;
  delete(name: string): Promise<void>;
  onChange(listener: () => void): void;
  /** Takes in groups written through other hub replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
}

/** Validates a group; problems are reported under `path` (`group`). */
function toGroup(input: GroupInput, path: string): ClusterGroup {
  const problems: Problem[] = [];
  const nameIssue = nameProblem(input.name, `${path}.name`);
  if (nameIssue !== undefined) problems.push(nameIssue);
  const labels = parseLabels(input.labels, `${path}.labels`);
  if (!labels.ok) problems.push(...labels.problems);
  let selector: ClusterGroup["selector"];
  if (input.selector !== undefined) {
    const parsed = parseSelectorString(input.selector, `${path}.selector`);
    if (parsed.ok) selector = parsed.value;
    else problems.push(...parsed.problems);
  }
  if (problems.length > 0 || !labels.ok) {
    throw FlotillaError.invalid("cluster group", problems);
  }
  return {
    name: input.name,
    labels: labels.value,
    ...compact({ selector }),
  };
}

export function createClusterGroups(deps: {
  readonly store: StateStore;
  readonly now: () => number;
}): ClusterGroups {
  const groups = new Map<string, StoredGroup>();
  let all: ClusterGroup[] | undefined;
  const listeners = new Set<() => void>();
  const updates = createUpdateQueue();
  const changed = (): void => {
    all = undefined;
    for (const listener of listeners) listener();
  };
  const stored = (
    record: ClusterGroupRecord,
    revision: number,
  ): StoredGroup => ({
    record,
    revision,
    group: toGroup(record, "group"),
  });
  const notFound = (name: string): FlotillaError =>
    new FlotillaError(
      "not_found",
      `Cluster group ${showValue(name)} does not exist`,
    );

  return {
    async start() {
      groups.clear();
      for (const { value, revision } of await deps.store.list(CLUSTER_GROUPS)) {
        groups.set(value.name, stored(value, revision));
      }
      changed();
    },
    follow(signal) {
      return followCollection(deps.store, CLUSTER_GROUPS, signal, {
        put(name, value, revision) {
          if ((groups.get(name)?.revision ?? 0) >= revision) return;
          groups.set(name, stored(value, revision));
          changed();
        },
        delete(name) {
          if (groups.delete(name)) changed();
        },
        error: () => undefined,
      });
    },
    all() {
      all ??= [...groups.values()].map((g) => g.group);
      return all;
    },
    get(name) {
      const group = groups.get(name);
      if (group === undefined) throw notFound(name);
      return group;
    },
    list() {
      return [...groups.values()].sort((a, b) =>
        a.record.name < b.record.name ? -1 : 1,
      );
    },
    async create(input) {
      toGroup(input, "group");
      if (groups.has(input.name)) {
        throw new FlotillaError(
          "already_exists",
          `Cluster group ${showValue(input.name)} already exists`,
        );
      }
      const now = deps.now();
      const record: ClusterGroupRecord = {
        name: input.name,
        labels: { ...input.labels },
        ...compact({ selector: input.selector }),
        createdAtMs: now,
        updatedAtMs: now,
      };
      const revision = await deps.store.put(
        CLUSTER_GROUPS,
        nameKey(input.name),
        record,
        { expectedRevision: 0 },
      );
      const group = stored(record, revision);
      groups.set(input.name, group);
      changed();
      return group;
    },
    async update(input, expectedRevision) {
      toGroup(input, "group");
      const { name } = input;
      const key = nameKey(name);
      return updates.update(name, {
        what: `cluster group ${showValue(name)}`,
        expectedRevision,
        write: async () => {
          const current = groups.get(name);
          if (current === undefined) throw notFound(name);
          const record: ClusterGroupRecord = {
            name,
            labels: { ...input.labels },
            ...compact({ selector: input.selector }),
            createdAtMs: current.record.createdAtMs,
            updatedAtMs: deps.now(),
          };
          const revision = await deps.store.put(CLUSTER_GROUPS, key, record, {
            expectedRevision: expectedRevision ?? current.revision,
          });
          const group = stored(record, revision);
          groups.set(name, group);
          changed();
          return group;
        },
        reload: async () => {
          const entry = await deps.store.get(CLUSTER_GROUPS, key);
          if (entry === undefined) {
            groups.delete(name);
            changed();
            throw notFound(name);
          }
          groups.set(name, stored(entry.value, entry.revision));
          changed();
        },
      });
    },
    async delete(name) {
      const current = groups.get(name);
      if (current === undefined) throw notFound(name);
      await deps.store.delete(CLUSTER_GROUPS, nameKey(name), {
        expectedRevision: current.revision,
      });
      groups.delete(name);
      changed();
    },
    onChange(listener) {
      listeners.add(listener);
    },
  };
}
