/**
 * Update strategies (AKS UpdateStrategy): stored as the JSON text the operator gave, after core
 * has parsed it, so `get` returns exactly what was written and runs created later parse the same
 * text. Stored in the "strategies" collection and cached.
 */
import {
  FlotillaError,
  parseJsonText,
  parseUpdateStrategy,
  showValue,
  type Problem,
  type UpdateStrategy,
} from "@flotilla/core";
import { z } from "zod";
import { nameProblem } from "../names.js";
import { nameKey } from "../store/keys.js";
import { defineCollection, type StateStore } from "../store/state-store.js";
import { createUpdateQueue } from "../store/update-queue.js";
import { followCollection } from "../store/follow-collection.js";

export interface StrategyRecord {
  readonly name: string;
  readonly strategyJson: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

const STRATEGIES = defineCollection<StrategyRecord>("strategies", (value) =>
  z
    .object({
      name: z.string(),
      strategyJson: z.string(),
      createdAtMs: z.number(),
      updatedAtMs: z.number(),
    })
    .parse(value),
);

export interface StoredStrategy {
  readonly record: StrategyRecord;
  readonly strategy: UpdateStrategy;
  readonly revision: number;
}

/** Parses strategy JSON text within core's input bounds; problems are under `path` (`strategyJson`). */
export function parseStrategyJson(text: string, path: string): UpdateStrategy {
  const raw = parseJsonText(text, path);
  if (!raw.ok) throw FlotillaError.invalid("update strategy", raw.problems);
  const parsed = parseUpdateStrategy(raw.value);
  if (!parsed.ok) {
    throw FlotillaError.invalid(
      "update strategy",
      parsed.problems.map((p): Problem => ({
        ...p,
        path: p.path === "" ? path : `${path}.${p.path}`,
      })),
    );
  }
  return parsed.value;
}

export interface UpdateStrategies {
  start(): Promise<void>;
  get(name: string): StoredStrategy;
  list(): StoredStrategy[];
  create(name: string, strategyJson: string): Promise<StoredStrategy>;
  update(
    name: string,
    strategyJson: string,
    expectedRevision?: number,
  ): Promise<StoredStrategy>;
  delete(name: string): Promise<void>;
  /** Takes in strategies written through other hub replicas until `signal` aborts. */
  follow(signal: AbortSignal): Promise<void>;
}

export function createUpdateStrategies(deps: {
  readonly store: StateStore;
  readonly now: () => number;
}): UpdateStrategies {
  const strategies = new Map<string, StoredStrategy>();
  const updates = createUpdateQueue();
  const notFound = (name: string): FlotillaError =>
    new FlotillaError(
      "not_found",
      `Update strategy ${showValue(name)} does not exist`,
    );
  const checkName = (name: string): void => {
    const problem = nameProblem(name, "name");
    if (problem !== undefined)
      throw FlotillaError.invalid("update strategy", [problem]);
  };

  return {
    async start() {
      strategies.clear();
      for (const { value, revision } of await deps.store.list(STRATEGIES)) {
        strategies.set(value.name, {
          record: value,
          revision,
          strategy: parseStrategyJson(value.strategyJson, "strategyJson"),
        });
      }
    },
    follow(signal) {
      return followCollection(deps.store, STRATEGIES, signal, {
        put(name, value, revision) {
          if ((strategies.get(name)?.revision ?? 0) >= revision) return;
          strategies.set(name, {
            record: value,
            revision,
            strategy: parseStrategyJson(value.strategyJson, "strategyJson"),
          });
        },
        delete(name) {
          strategies.delete(name);
        },
        error: () => undefined,
      });
    },
    get(name) {
      const found = strategies.get(name);
      if (found === undefined) throw notFound(name);
      return found;
    },
    list() {
      return [...strategies.values()].sort((a, b) =>
        a.record.name < b.record.name ? -1 : 1,
      );
    },
    async create(name, strategyJson) {
      checkName(name);
      const strategy = parseStrategyJson(strategyJson, "strategyJson");
      if (strategies.has(name)) {
        throw new FlotillaError(
          "already_exists",
          `Update strategy ${showValue(name)} already exists`,
        );
      }
      const now = deps.now();
      const record = { name, strategyJson, createdAtMs: now, updatedAtMs: now };
      const revision = await deps.store.put(STRATEGIES, nameKey(name), record, {
        expectedRevision: 0,
      });
      const stored = { record, strategy, revision };
      strategies.set(name, stored);
      return stored;
    },
    async update(name, strategyJson, expectedRevision) {
      checkName(name);
      const strategy = parseStrategyJson(strategyJson, "strategyJson");
      const key = nameKey(name);
      return updates.update(name, {
        what: `update strategy ${showValue(name)}`,
        expectedRevision,
        write: async () => {
          const current = strategies.get(name);
          if (current === undefined) throw notFound(name);
          const record = {
            name,
            strategyJson,
            createdAtMs: current.record.createdAtMs,
            updatedAtMs: deps.now(),
          };
          const revision = await deps.store.put(STRATEGIES, key, record, {
            expectedRevision: expectedRevision ?? current.revision,
          });
          const stored = { record, strategy, revision };
          strategies.set(name, stored);
          return stored;
        },
        reload: async () => {
          const entry = await deps.store.get(STRATEGIES, key);
          if (entry === undefined) {
            strategies.delete(name);
            throw notFound(name);
          }
          strategies.set(name, {
            record: entry.value,
            revision: entry.revision,
            strategy: parseStrategyJson(
              entry.value.strategyJson,
              "strategyJson",
            ),
          });
        },
      });
    },
    async delete(name) {
      const current = strategies.get(name);
      if (current === undefined) throw notFound(name);
      await deps.store.delete(STRATEGIES, nameKey(name), {
        expectedRevision: current.revision,
      });
      strategies.delete(name);
    },
  };
}
