/**
 * Shared test helpers: an in-memory CliIo, and hand-made plan and simulation outputs in core's
 * documented shapes.
 */
import type { CliIo, DirEntry } from "../src/io.js";
import type {
  PlanOutput,
  SimulationOutput,
} from "../src/render/preview-types.js";
import type { RenderOptions } from "../src/render/options.js";
import { createStyle } from "../src/render/style.js";
import { compact } from "@flotilla/core";

/** A CliIo over in-memory files that records what was written. */
export interface MemoryIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
  /** The files as they are now (given ones and written ones). */
  readonly files: Readonly<Record<string, string>>;
  /** The permission bits each written file got. */
  readonly modes: Readonly<Record<string, number>>;
}

/** The fixed "now" of in-memory runs: Monday 2026-03-02 10:00 UTC. */
export const NOW_MS = Date.UTC(2026, 2, 2, 10);

function enoent(path: string): Error {
  return Object.assign(
    new Error(`ENOENT: no such file or directory, open '${path}'`),
    { code: "ENOENT" },
  );
}

/** The entries directly under `dir` among the files' paths (directories implied by the paths). */
function listing(
  files: Readonly<Record<string, string>>,
  dir: string,
): DirEntry[] | undefined {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  const entries = new Map<string, DirEntry["kind"]>();
  for (const path of Object.keys(files)) {
    if (!path.startsWith(prefix)) continue;
    const [name = "", ...rest] = path.slice(prefix.length).split("/");
    entries.set(name, rest.length === 0 ? "file" : "directory");
  }
  if (entries.size === 0) return undefined;
  return [...entries].map(([name, kind]) => ({ name, kind }));
}

/**
 * Files are a map from path to content; a missing path rejects like Node does (code ENOENT).
 * The clock stands at {@link NOW_MS} and the user is "tester" unless told otherwise.
 */
export function memoryIo(
  files: Readonly<Record<string, string>> = {},
  options: {
    isTTY?: boolean;
    columns?: number;
    env?: Record<string, string>;
    nowMs?: number;
    /** What standard input holds (absent: the io has none). */
    stdin?: string;
  } = {},
): MemoryIo {
  let out = "";
  let err = "";
  files = { ...files };
  const modes: Record<string, number> = {};
  return {
    files,
    modes,
    writeFile: (path, data, mode) => {
      (files as Record<string, string>)[path] =
        typeof data === "string" ? data : new TextDecoder().decode(data);
      modes[path] = mode;
      return Promise.resolve();
    },
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    readFile: (path) => {
      const content = files[path];
      if (content !== undefined) return Promise.resolve(content);
      return Promise.reject(enoent(path));
    },
    readBytes: (path) => {
      const content = files[path];
      if (content !== undefined)
        return Promise.resolve(new TextEncoder().encode(content));
      return Promise.reject(enoent(path));
    },
    readDir: (path) => {
      const entries = listing(files, path);
      return entries === undefined
        ? Promise.reject(enoent(path))
        : Promise.resolve(entries);
    },
    ...(options.stdin === undefined
      ? {}
      : { readStdin: () => Promise.resolve(options.stdin ?? "") }),
    isTTY: options.isTTY ?? false,
    ...compact({ columns: options.columns }),
    env: options.env ?? {},
    now: () => options.nowMs ?? NOW_MS,
    userName: "tester",
    out: () => out,
    err: () => err,
  };
}

/** Plain (no colour) rendering at `width`. */
export function plainOptions(width = 80, all = false): RenderOptions {
  return { width, style: createStyle(false), all };
}

/** c-001 … c-NNN. */
export function names(prefix: string, n: number, from = 1): string[] {
  return Array.from(
    { length: n },
    (_, i) => `${prefix}-${String(i + from).padStart(3, "0")}`,
  );
}

/** A three-stage staged plan like examples/staged-upgrade. */
export const stagedPlan: PlanOutput = {
  apiVersion: "flotilla.dev/v1",
  dialect: "staged",
  waves: [
    {
      name: "canary",
      kind: "stage",
      maxConcurrency: 2,
      maxAllowedFailures: 0,
      groups: [
        {
          name: "canary",
          clusters: names("c", 3),
          maxConcurrency: 1,
          maxAllowedFailures: 0,
        },
      ],
    },
    {
      name: "staging",
      kind: "stage",
      maxConcurrency: 4,
      maxAllowedFailures: 2,
      groups: [
        {
          name: "staging",
          clusters: names("s", 16),
          maxConcurrency: 4,
          maxAllowedFailures: null,
        },
      ],
    },
    {
      name: "prod",
      kind: "stage",
      maxConcurrency: 10,
      maxAllowedFailures: null,
      groups: [
        {
          name: "prod-eu",
          clusters: names("p", 20),
          maxConcurrency: 5,
          maxAllowedFailures: 5,
        },
        {
          name: "prod-us",
          clusters: names("p", 20, 21),
          maxConcurrency: 5,
          maxAllowedFailures: 5,
        },
      ],
    },
  ],
  limits: {},
  unassigned: ["lab-001", "lab-002"],
  warnings: [],
};

/** A two-partition Fleet plan. */
export const fleetPlan: PlanOutput = {
  apiVersion: "flotilla.dev/v1",
  dialect: "fleet",
  waves: [
    {
      name: "canary",
      kind: "partition",
      maxUnavailable: 1,
      groups: [{ name: "canary", clusters: names("c", 4) }],
    },
    {
      name: "prod",
      kind: "partition",
      maxUnavailable: 4,
      groups: [{ name: "prod", clusters: names("p", 40) }],
    },
  ],
  limits: { maxUnavailable: 44, maxUnavailablePartitions: 0, maxNew: 50 },
  unassigned: [],
  warnings: [
    {
      code: "MaxUnavailableDisablesGates",
      message: "maxUnavailable 100%: partitions never gate",
    },
  ],
};

/** A staged simulation where one staging member failed and one prod member was skipped. */
export const stagedSimulation: SimulationOutput = {
  apiVersion: "flotilla.dev/v1",
  dialect: "staged",
  start: "2026-03-02T09:00:00.000Z",
  end: "2026-03-02T15:42:00.000Z",
  durationSeconds: 6 * 3600 + 42 * 60,
  finalState: "Failed",
  failureCount: 1,
  truncated: false,
  timeline: [
    {
      at: "2026-03-02T09:00:00.000Z",
      type: "stage",
      wave: "canary",
      message: "Started",
    },
    {
      at: "2026-03-02T09:00:00.000Z",
      type: "started",
      cluster: "c-001",
      wave: "canary",
      group: "canary",
      message: "Started",
    },
    {
      at: "2026-03-02T09:00:00.000Z",
      type: "started",
      cluster: "c-002",
      wave: "canary",
      group: "canary",
      message: "Started",
    },
    {
      at: "2026-03-02T09:15:00.000Z",
      type: "succeeded",
      cluster: "c-001",
      wave: "canary",
      group: "canary",
      message: "Succeeded",
    },
    {
      at: "2026-03-02T10:02:00.000Z",
      type: "started",
      cluster: "s-001",
      wave: "staging",
      group: "staging",
      message: "Started",
    },
    {
      at: "2026-03-02T10:07:00.000Z",
      type: "failed",
      cluster: "s-001",
      wave: "staging",
      group: "staging",
      message: "Upgrade failed",
    },
  ],
  waves: [
    {
      name: "canary",
      state: "Completed",
      failureCount: 0,
      groups: [
        {
          name: "canary",
          state: "Completed",
          failureCount: 0,
          members: names("c", 2).map((name) => ({ name, state: "Succeeded" })),
        },
      ],
    },
    {
      name: "staging",
      state: "Failed",
      failureCount: 1,
      groups: [
        {
          name: "staging",
          state: "Failed",
          failureCount: 1,
          members: [
            { name: "s-001", state: "Failed", reason: "UpgradeFailed" },
            { name: "s-002", state: "Succeeded" },
            { name: "s-003", state: "Skipped", reason: "MinorVersionSkew" },
            { name: "s-004", state: "NotStarted" },
          ],
        },
      ],
    },
  ],
  unassigned: [],
  warnings: [],
};
