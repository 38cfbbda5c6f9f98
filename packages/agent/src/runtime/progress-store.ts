/**
 * The `ProgressStore` port: what an agent remembers across restarts, per cluster, so a
 * restarted agent does not redo an intent generation it already finished: the last generation
 * fully handled and how each of its items ended. The file adapter keeps one JSON document for
 * every cluster of the process, replaced atomically (temp file, fsync, rename); a corrupted file is
 * set aside and the store starts fresh with a warning instead of failing the agent.
 */
import { open, mkdir, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { FlotillaError } from "@flotilla/core";
import type { StatusPhase, StatusSubject } from "@flotilla/protocol";
import { z } from "zod";

/** How one item of a handled generation ended (what the agent reported last for it). */
export interface HandledItem {
  readonly subject: StatusSubject;
  /** Bundles: the content digest applied, so a restarted agent reuses only the very same content. */
  readonly digest?: string;
  /** Bundles: the intent's redeploy counter when it was applied (absent for 0). */
  readonly forceSync?: number;
  readonly phase: StatusPhase;
  /** Machine-readable reason (Unsupported, AlreadyAtTarget, …). */
  readonly reason?: string;
  readonly message?: string;
  readonly error?: string;
}

/** The last intent generation a cluster's agent fully handled. */
export interface ProgressRecord {
  readonly cluster: string;
  readonly generation: number;
  /** Failed when any item failed. */
  readonly outcome: "Succeeded" | "Failed";
  readonly items: readonly HandledItem[];
  readonly handledAtMs: number;
}

/** What {@link ProgressStore.load} found. */
export interface ProgressLoad {
  /** Set when stored progress was unreadable and the store started fresh. */
  readonly warning?: string;
}

/** `{ signal }` of store calls. */
export interface ProgressOptions {
  readonly signal?: AbortSignal;
}

/** Remembers each cluster's last fully handled generation. */
export interface ProgressStore {
  /** Reads what was stored; once per store (later calls return the first result). Before get/put. */
  load(options?: ProgressOptions): Promise<ProgressLoad>;
  /** The cluster's record, or undefined when it never finished a generation. */
  get(cluster: string): ProgressRecord | undefined;
  /** Replaces the cluster's record; resolves once it is durable. */
  put(record: ProgressRecord, options?: ProgressOptions): Promise<void>;
}

/** Whether `generation` was already handled according to `record`: generations only increase. */
export function isGenerationHandled(
  record: ProgressRecord | undefined,
  generation: number,
): boolean {
  return record !== undefined && generation <= record.generation;
}

const text = z.string().max(4096);
const recordSchema = z.strictObject({
  cluster: z.string().min(1).max(63),
  generation: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  outcome: z.enum(["Succeeded", "Failed"]),
  items: z
    .array(
      z.strictObject({
        subject: z.union([
          z.strictObject({
            kind: z.literal("bundle"),
            bundle: text,
            revision: text,
          }),
          z.strictObject({ kind: z.literal("upgrade"), upgradeId: text }),
        ]),
        digest: text.optional(),
        forceSync: z.number().int().min(1).optional(),
        phase: z.enum([
          "Applying",
          "Applied",
          "Ready",
          "NotReady",
          "Failed",
          "Pending",
          "Modified",
        ]),
        reason: text.optional(),
        message: text.optional(),
        error: text.optional(),
      }),
    )
    .max(10_000),
  handledAtMs: z.number().int().min(0),
});
const fileSchema = z.strictObject({
  version: z.literal(1),
  clusters: z.record(z.string(), recordSchema),
});

/** Temp files are unique per process and write, even with two stores on one file. */
let tempCounter = 0;

function copy(record: ProgressRecord): ProgressRecord {
  return structuredClone(record);
}

/** A store in memory, for tests and for agents that need not survive restarts. */
export function createMemoryProgressStore(): ProgressStore {
  const records = new Map<string, ProgressRecord>();
  return {
    load: (options = {}) =>
      new Promise((resolve) => {
        options.signal?.throwIfAborted();
        resolve({});
      }),
    get: (cluster) => {
      const r = records.get(cluster);
      return r === undefined ? undefined : copy(r);
    },
    put: (record, options = {}) =>
      new Promise((resolve) => {
        options.signal?.throwIfAborted();
        records.set(record.cluster, copy(record));
        resolve();
      }),
  };
}

/** A store in one JSON file, shared by every cluster of the process. */
export function createFileProgressStore(file: string): ProgressStore {
  const records = new Map<string, ProgressRecord>();
  let loading: Promise<ProgressLoad> | undefined;
  let loaded = false;
  let changes = 0;
  let written = 0;
  let writing: Promise<void> = Promise.resolve();

  const assertLoaded = (): void => {
    if (!loaded)
      throw new FlotillaError(
        "failed_precondition",
        `Cannot use progress file "${file}": call load() first`,
      );
  };

  const read = async (signal?: AbortSignal): Promise<ProgressLoad> => {
    let content: string;
    try {
      content = await readFile(file, {
        encoding: "utf8",
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return {};
      throw new FlotillaError(
        "unavailable",
        `Cannot read progress file "${file}"`,
        { cause: error },
      );
    }
    let why: string;
    try {
      const parsed = fileSchema.safeParse(JSON.parse(content));
      if (parsed.success) {
        for (const [name, record] of Object.entries(parsed.data.clusters))
          records.set(name, record);
        return {};
      }
      why = parsed.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`)
        .join("; ");
    } catch (error) {
      why = `not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
    }
    // Keep the bad file for a person to inspect; the next put writes a fresh one.
    const aside = `${file}.corrupt`;
    await rename(file, aside).catch(() => undefined);
    return {
      warning: `Progress file "${file}" is corrupted (${why}): moved it to "${aside}" and started fresh; finished generations may be redone`,
    };
  };

  /** Writes the whole document to a temp file, syncs it, and renames it over the file. */
  const write = async (): Promise<void> => {
    const target = changes;
    if (written >= target) return;
    const document = { version: 1, clusters: Object.fromEntries(records) };
    const temp = `${file}.${String(process.pid)}.${String(++tempCounter)}.tmp`;
    await mkdir(dirname(file), { recursive: true });
    try {
      const handle = await open(temp, "w");
      try {
        await handle.writeFile(`${JSON.stringify(document, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw new FlotillaError(
        "unavailable",
        `Cannot write progress file "${file}"`,
        { cause: error },
      );
    }
    written = target;
  };

  return {
    load(options = {}) {
      loading ??= read(options.signal).then(
        (result) => {
          loaded = true;
          return result;
        },
        (error: unknown) => {
          loading = undefined; // a failed read (say, aborted) may be retried
          throw error;
        },
      );
      return loading;
    },
    get(cluster) {
      assertLoaded();
      const r = records.get(cluster);
      return r === undefined ? undefined : copy(r);
    },
    async put(record, options = {}) {
      assertLoaded();
      options.signal?.throwIfAborted();
      records.set(record.cluster, copy(record));
      changes++;
      // Writes run one at a time; a write covers every change made before it began, so a burst
      // of puts from many agents costs a few writes, not one each. A failed write fails its own
      // callers and leaves the next write to try again.
      const next = writing.catch(() => undefined).then(write);
      writing = next;
      await next;
    },
  };
}
