/**
 * How a run is stored: a snapshot plus a journal of the event batches applied since, so that a
 * batch costs one small write whatever the size of the run. (Storing the whole run on every batch
 * re-encoded every member each time; at 10,000 members that is 1.5 MB per event, and more than
 * one KV value may hold.)
 *
 * Keys of the "runs" collection, for a run named N:
 * - `N`: the head. It names the snapshot (inline when it fits, otherwise in parts), the sequence
 *   number the snapshot is at, and the strategy the run was created from.
 * - `N.p.<slot>.<i>`: part i of a snapshot too large for the head. Two slots alternate per owner
 *   (`a`, `b`; with a lease, `e<epoch>-a` and `e<epoch>-b`), so the parts the head names are never
 *   overwritten while a new snapshot is written, not even by a deposed owner that wakes up.
 * - `N.j.<i>`: the journal, a ring of {@link RING} entries, each one batch: `{seq, nowMs, events}`.
 *   Entry seq S lives in slot S mod RING and is written with compare-and-set (create, or the
 *   revision of the entry it replaces), so two hubs cannot both append S.
 *
 * The run's state is the snapshot with the journal entries after it replayed through core's `step`
 * (pure and deterministic: same run, event and time give the same result). Only accepted events
 * are journaled. A snapshot is taken every {@link SNAPSHOT_EVERY} entries and when the run
 * finishes; the head moves to it with compare-and-set, and a crash in between leaves the old head,
 * whose entries are all still in the ring. `seq` is the run's revision as clients see it: it
 * changes with every stored batch and with nothing else.
 *
 * Fencing (docs/high-availability.md): when the hub runs as several replicas, only the owner of
 * the run's lease writes, and every entry it writes carries the lease's epoch. A new owner first
 * appends a takeover entry (no events, its epoch); since every append is a compare-and-set on the
 * next slot, a deposed owner's next append loses, and once it has read the journal back it sees
 * the higher epoch and refuses to write ({@link FencedError}). The head's snapshot records the
 * epoch too.
 *
 * Records written by earlier versions (`{run, strategyName}` under `N`) are read as a snapshot at
 * seq 1 and rewritten in this form at the next snapshot.
 */
import {
  compact,
  FlotillaError,
  showValue,
  step,
  type Run,
  type RunEvent,
} from "@flotilla/core";
import type { Logger } from "pino";
import { z } from "zod";
import {
  decodeKeyToken,
  isRunJournalKey,
  runHeadKey,
  runJournalKey,
  runRecordsPrefix,
  runSnapshotPartKey,
} from "../store/keys.js";
import {
  defineCollection,
  type Entry,
  type StateStore,
  isRevisionConflict,
} from "../store/state-store.js";

/** Journal slots per run. */
export const RING = 512;
/** Entries between snapshots; well below {@link RING} so a slow snapshot never blocks appends. */
export const SNAPSHOT_EVERY = 128;

interface Snapshot {
  readonly seq: number;
  /** The run's JSON, when it fits in the head. */
  readonly text?: string;
  /** Otherwise: the slot and number of its parts. */
  readonly slot?: string;
  readonly parts?: number;
  /** The epoch of the owner that wrote it (absent: written without a lease). */
  readonly epoch?: number;
}

interface Head {
  readonly format: 2;
  readonly snapshot: Snapshot;
  readonly strategyName?: string;
}

interface LegacyHead {
  readonly run: Run;
  readonly strategyName?: string;
}

interface JournalEntry {
  readonly seq: number;
  readonly nowMs: number;
  readonly events: readonly RunEvent[];
  /** The epoch of the owner's lease (absent: written without a lease). */
  readonly epoch?: number;
  /** On a takeover entry: the replica that took the run over. */
  readonly owner?: string;
}

/** The lease a write is made under: its epoch, and the replica holding it. */
export interface RunFence {
  readonly epoch: number;
  readonly replica: string;
}

/** A write refused because a newer owner of the run has written: this writer is deposed. */
export class FencedError extends FlotillaError {
  constructor(
    readonly run: string,
    readonly epoch: number,
    readonly storedEpoch: number,
  ) {
    super(
      "unavailable",
      `Run ${showValue(run)} has a newer owner (lease epoch ${String(storedEpoch)}); this replica's epoch ${String(epoch)} may no longer write it`,
    );
  }
}

/** True for a {@link FencedError}. */
export function isFenced(error: unknown): error is FencedError {
  return error instanceof FencedError;
}

const SLOT_PATTERN = /^(?:[ab]|e[0-9]+-[ab])$/;

interface Part {
  readonly part: string;
}

type Stored = Head | LegacyHead | JournalEntry | Part;

const seqField = z.number().int().min(1);
const storedShape = z.union([
  z.object({
    format: z.literal(2),
    snapshot: z.object({
      seq: seqField,
      text: z.string().optional(),
      slot: z.string().regex(SLOT_PATTERN).optional(),
      parts: z.number().int().min(1).optional(),
      epoch: z.number().int().min(0).optional(),
    }),
    strategyName: z.string().optional(),
  }),
  z.object({
    run: z.looseObject({
      apiVersion: z.literal("flotilla.dev/v1"),
      name: z.string().min(1),
      stages: z.array(z.unknown()),
    }),
    strategyName: z.string().optional(),
  }),
  z.object({
    seq: seqField,
    nowMs: z.number(),
    events: z.array(z.looseObject({ type: z.string() })),
    epoch: z.number().int().min(0).optional(),
    owner: z.string().optional(),
  }),
  z.object({ part: z.string() }),
]);

/** The "runs" collection: heads, snapshot parts and journal entries (checked by shape). */
export const RUN_LOG = defineCollection<Stored>("runs", (value) => {
  storedShape.parse(value);
  return value as Stored;
});

const journalKey = (name: string, seq: number): string =>
  runJournalKey(name, seq % RING);

/** A run read back from the store, with the log that appends to it. */
export interface LoadedRun {
  readonly run: Run;
  readonly log: RunLog;
}

/** The stored form of one run; one writer (the run's mailbox) at a time. */
export class RunLog {
  /** Sequence number of the last stored batch: the run's revision. */
  #seq: number;
  #snapshotSeq: number;
  #slot: string | undefined;
  /** The highest epoch written into the head or the journal: writes under a lower one are refused. */
  #epoch: number;
  #headRevision: number;
  /** The entry in each journal slot (absent: never written, or deleted). */
  readonly #ring = new Map<number, { revision: number; seq: number }>();
  #snapshotting: Promise<void> | undefined;

  private constructor(
    private readonly store: StateStore,
    readonly name: string,
    readonly strategyName: string | undefined,
    head: { seq: number; slot?: string; revision: number; epoch?: number },
  ) {
    this.#seq = head.seq;
    this.#snapshotSeq = head.seq;
    this.#slot = head.slot;
    this.#headRevision = head.revision;
    this.#epoch = head.epoch ?? 0;
  }

  get seq(): number {
    return this.#seq;
  }

  /** The epoch of the newest owner that wrote this run (0: none with a lease). */
  get epoch(): number {
    return this.#epoch;
  }

  #checkFence(fence: RunFence | undefined): void {
    if (fence !== undefined && fence.epoch < this.#epoch) {
      throw new FencedError(this.name, fence.epoch, this.#epoch);
    }
  }

  /** True while a snapshot is being written. */
  get busy(): boolean {
    return this.#snapshotting !== undefined;
  }

  /** Stores a new run at seq 1; fails if a run of that name exists. */
  static async create(
    store: StateStore,
    run: Run,
    strategyName: string | undefined,
  ): Promise<RunLog> {
    const text = JSON.stringify(run);
    const written = await writeSnapshot(store, run.name, text, 1, "a");
    const revision = await store.put(
      RUN_LOG,
      runHeadKey(run.name),
      headOf(written, strategyName),
      { expectedRevision: 0 },
    );
    return new RunLog(store, run.name, strategyName, {
      seq: 1,
      ...compact({ slot: written.slot }),
      revision,
    });
  }

  /** Every stored run, in name order. */
  static async loadAll(
    store: StateStore,
    logger: Logger,
  ): Promise<LoadedRun[]> {
    const byRun = new Map<string, Entry<Stored>[]>();
    for (const entry of await store.list(RUN_LOG)) {
      const token = entry.key.split(".", 1)[0] ?? entry.key;
      const list = byRun.get(token) ?? [];
      list.push(entry);
      byRun.set(token, list);
    }
    const out: LoadedRun[] = [];
    for (const [token, entries] of byRun) {
      const head = entries.find((e) => e.key === token);
      if (head === undefined) {
        // Parts of a run whose creation did not finish: nothing refers to them.
        logger.warn({ key: token }, "run records without a head are ignored");
        continue;
      }
      out.push(rebuild(store, head, entries, logger));
    }
    return out;
  }

  /** One stored run, or undefined if there is none. */
  static async load(
    store: StateStore,
    name: string,
    logger: Logger,
  ): Promise<LoadedRun | undefined> {
    const head = await store.get(RUN_LOG, runHeadKey(name));
    if (head === undefined) return undefined;
    const rest = await store.list(RUN_LOG, { prefix: runRecordsPrefix(name) });
    return rebuild(store, head, [head, ...rest], logger);
  }

  /**
   * Stores one batch of accepted events; resolves with its seq. With `fence`, refused with a
   * {@link FencedError} when a newer owner has written the run.
   */
  async append(
    nowMs: number,
    events: readonly RunEvent[],
    fence?: RunFence,
  ): Promise<number> {
    this.#checkFence(fence);
    return await this.#appendEntry(nowMs, events, fence);
  }

  /**
   * Records that `fence.replica` owns the run from now on, under `fence.epoch`: an entry without
   * events whose compare-and-set makes every later append by an earlier owner lose. Refused with a
   * {@link FencedError} when an owner with a higher epoch wrote already; a
   * {@link RevisionConflictError} means someone appended meanwhile (read the run back and retry).
   */
  async takeOver(nowMs: number, fence: RunFence): Promise<number> {
    this.#checkFence(fence);
    return await this.#appendEntry(nowMs, [], fence, fence.replica);
  }

  async #appendEntry(
    nowMs: number,
    events: readonly RunEvent[],
    fence: RunFence | undefined,
    owner?: string,
  ): Promise<number> {
    const seq = this.#seq + 1;
    if (seq - this.#snapshotSeq >= RING) {
      // The ring is full of entries the head still needs (snapshots kept failing).
      await this.#snapshotting;
      if (seq - this.#snapshotSeq >= RING) {
        throw new Error(
          `run ${this.name}: ${String(RING)} batches since the last snapshot; waiting for one to be stored`,
        );
      }
    }
    const slot = seq % RING;
    const entry: JournalEntry = {
      seq,
      nowMs,
      events,
      ...compact({ epoch: fence?.epoch, owner }),
    };
    const revision = await this.store.put(
      RUN_LOG,
      journalKey(this.name, seq),
      entry,
      { expectedRevision: this.#ring.get(slot)?.revision ?? 0 },
    );
    this.#ring.set(slot, { revision, seq });
    this.#seq = seq;
    if (fence !== undefined) this.#epoch = Math.max(this.#epoch, fence.epoch);
    return seq;
  }

  /**
   * Takes in a journal entry another replica wrote (a replica that follows a run it does not
   * own). Returns its events when it is the next entry (the caller steps them), `undefined` when
   * it is old news, and `"gap"` when entries were missed (read the whole run back).
   */
  observe(
    key: string,
    revision: number,
    value: unknown,
  ): readonly RunEvent[] | undefined | "gap" {
    const parsed = storedShape.safeParse(value);
    if (!parsed.success || !isJournal(parsed.data as Stored)) return undefined;
    const entry = parsed.data as JournalEntry;
    if (entry.seq <= this.#seq) return undefined;
    if (entry.seq !== this.#seq + 1) return "gap";
    const index = Number(key.slice(key.lastIndexOf(".") + 1));
    this.#ring.set(index, { revision, seq: entry.seq });
    this.#seq = entry.seq;
    this.#epoch = Math.max(this.#epoch, entry.epoch ?? 0);
    return entry.events;
  }

  /** True when the journal is long enough that the next batch should take a snapshot. */
  get wantsSnapshot(): boolean {
    return (
      this.#snapshotting === undefined &&
      this.#seq - this.#snapshotSeq >= SNAPSHOT_EVERY
    );
  }

  /**
   * Starts storing `run` (as it is now, at the current seq) as the snapshot. The run is encoded
   * before this returns, so the caller may go on changing it. With `dropJournal` (a finished
   * run) the journal entries are deleted once the head has moved.
   */
  snapshot(run: Run, dropJournal = false, fence?: RunFence): Promise<void> {
    const text = JSON.stringify(run);
    const seq = this.#seq;
    const previous = this.#snapshotting ?? Promise.resolve();
    const work = previous
      .catch(() => undefined)
      .then(() => this.#writeSnapshot(text, seq, dropJournal, fence))
      .finally(() => {
        if (this.#snapshotting === work) this.#snapshotting = undefined;
      });
    this.#snapshotting = work;
    return work;
  }

  async #writeSnapshot(
    text: string,
    seq: number,
    dropJournal: boolean,
    fence: RunFence | undefined,
  ): Promise<void> {
    if (seq <= this.#snapshotSeq) return;
    this.#checkFence(fence);
    const slot = nextSlot(this.#slot, fence?.epoch);
    const written = await writeSnapshot(this.store, this.name, text, seq, slot);
    const head = headOf(
      { ...written, ...compact({ epoch: fence?.epoch }) },
      this.strategyName,
    );
    await this.#moveHead(head, seq, fence);
    this.#snapshotSeq = seq;
    const replaced = this.#slot;
    if (written.slot !== undefined) this.#slot = written.slot;
    if (fence !== undefined && written.slot !== undefined) {
      await this.#dropOlderParts(fence.epoch, written.slot, replaced);
    }
    if (!dropJournal) return;
    for (const [index, entry] of [...this.#ring]) {
      // An entry appended since (a finished run can be retried) stays.
      if (entry.seq > seq) continue;
      await this.store.delete(RUN_LOG, journalKey(this.name, entry.seq), {
        expectedRevision: entry.revision,
      });
      if (this.#ring.get(index) === entry) this.#ring.delete(index);
    }
  }

  /**
   * Moves the head to a new snapshot with compare-and-set. When someone else moved it meanwhile
   * (an earlier owner that woke up and stored an older snapshot, or a replica reading the run
   * back), the head is read again: an older snapshot by an owner with no higher epoch is replaced,
   * a higher epoch means this writer is deposed.
   */
  async #moveHead(
    head: Head,
    seq: number,
    fence: RunFence | undefined,
  ): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        this.#headRevision = await this.store.put(
          RUN_LOG,
          runHeadKey(this.name),
          head,
          { expectedRevision: this.#headRevision },
        );
        return;
      } catch (error) {
        if (!isRevisionConflict(error) || attempt >= 3) throw error;
        const stored = await this.store.get(RUN_LOG, runHeadKey(this.name));
        if (stored === undefined || !isHead(stored.value)) throw error;
        const storedEpoch = stored.value.snapshot.epoch ?? 0;
        if (fence !== undefined && storedEpoch > fence.epoch) {
          this.#epoch = Math.max(this.#epoch, storedEpoch);
          throw new FencedError(this.name, fence.epoch, storedEpoch);
        }
        if (stored.value.snapshot.seq >= seq) {
          this.#headRevision = stored.revision;
          return;
        }
        this.#headRevision = stored.revision;
      }
    }
  }

  /** Deletes snapshot parts written under lower epochs (never named by a head any more). */
  async #dropOlderParts(
    epoch: number,
    current: string,
    replaced: string | undefined,
  ): Promise<void> {
    const parts = await this.store.list(RUN_LOG, {
      prefix: `${runRecordsPrefix(this.name)}p.`,
    });
    for (const part of parts) {
      const slot = part.key.split(".").at(-2) ?? "";
      if (slot === current || slot === replaced) continue;
      if (slotEpoch(slot) >= epoch) continue;
      await this.store
        .delete(RUN_LOG, part.key, { expectedRevision: part.revision })
        .catch(() => undefined);
    }
  }

  /** Resolves when no snapshot is being written. */
  async settled(): Promise<void> {
    while (this.#snapshotting !== undefined) {
      await this.#snapshotting.catch(() => undefined);
    }
  }

  #restore(entries: readonly Entry<Stored>[], epoch: number): void {
    for (const e of entries) {
      const index = Number(e.key.slice(e.key.lastIndexOf(".") + 1));
      this.#ring.set(index, {
        revision: e.revision,
        seq: (e.value as JournalEntry).seq,
      });
    }
    this.#epoch = Math.max(this.#epoch, epoch);
  }

  /** @internal used by {@link rebuild}. */
  static restored(
    store: StateStore,
    name: string,
    strategyName: string | undefined,
    head: { seq: number; slot?: string; revision: number; epoch?: number },
    journal: readonly Entry<Stored>[],
    seq: number,
    epoch: number,
  ): RunLog {
    const log = new RunLog(store, name, strategyName, head);
    log.#restore(journal, epoch);
    log.#seq = seq;
    return log;
  }
}

function headOf(snapshot: Snapshot, strategyName: string | undefined): Head {
  return strategyName === undefined
    ? { format: 2, snapshot }
    : { format: 2, snapshot, strategyName };
}

/** Writes the parts of a snapshot too large for the head; returns what the head says of it. */
async function writeSnapshot(
  store: StateStore,
  name: string,
  text: string,
  seq: number,
  slot: string,
): Promise<Snapshot> {
  // A UTF-8 character of a JSON string takes at most 3 bytes once escaped again; half the
  // value size leaves the head room for its own fields.
  const inline = Math.floor(store.maxValueBytes / 6);
  if (text.length <= inline) return { seq, text };
  const size = Math.floor(store.maxValueBytes / 3) - 64;
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size)
    parts.push(text.slice(i, i + size));
  await Promise.all(
    parts.map((part, i) =>
      store.put(RUN_LOG, runSnapshotPartKey(name, slot, i), { part }),
    ),
  );
  return { seq, slot, parts: parts.length };
}

/** The slot after `current`: `a` and `b` alternate, each owner (epoch) with its own pair. */
function nextSlot(
  current: string | undefined,
  epoch: number | undefined,
): string {
  const letter = current?.endsWith("a") === true ? "b" : "a";
  return epoch === undefined ? letter : `e${String(epoch)}-${letter}`;
}

/** The epoch a slot was written under (0: a slot written without a lease). */
function slotEpoch(slot: string): number {
  const match = /^e([0-9]+)-[ab]$/.exec(slot);
  return match === null ? 0 : Number(match[1]);
}

function isHead(value: Stored): value is Head {
  return "format" in value;
}

function isLegacy(value: Stored): value is LegacyHead {
  return "run" in value;
}

function isJournal(value: Stored): value is JournalEntry {
  return "events" in value;
}

/** The run a head, its parts and its journal describe. */
function rebuild(
  store: StateStore,
  head: Entry<Stored>,
  entries: readonly Entry<Stored>[],
  logger: Logger,
): LoadedRun {
  const token = head.key;
  const name = decodeKeyToken(token);
  const value = head.value;
  let run: Run;
  let snapshot: Snapshot;
  let strategyName: string | undefined;
  if (isLegacy(value)) {
    run = value.run;
    snapshot = { seq: 1 };
    strategyName = value.strategyName;
  } else if (isHead(value)) {
    snapshot = value.snapshot;
    strategyName = value.strategyName;
    run = JSON.parse(snapshotText(name, snapshot, entries)) as Run;
  } else {
    throw new Error(`runs/${token}: the head is not a run head`);
  }
  const journal = entries.filter(
    (e) => isRunJournalKey(name, e.key) && isJournal(e.value),
  );
  const pending = journal
    .map((e) => e.value as JournalEntry)
    .filter((e) => e.seq > snapshot.seq)
    .sort((a, b) => a.seq - b.seq);
  let seq = snapshot.seq;
  let epoch = snapshot.epoch ?? 0;
  for (const entry of pending) {
    if (entry.seq !== seq + 1) {
      logger.error(
        { run: run.name, expected: seq + 1, found: entry.seq },
        "run journal has a gap; later entries are ignored",
      );
      break;
    }
    for (const event of entry.events) {
      const result = step(run, event, entry.nowMs);
      if (result.rejected !== undefined) {
        logger.warn(
          {
            run: run.name,
            seq: entry.seq,
            event: event.type,
            reason: result.rejected.message,
          },
          "journaled event refused on replay",
        );
      }
    }
    seq = entry.seq;
    epoch = Math.max(epoch, entry.epoch ?? 0);
  }
  const log = RunLog.restored(
    store,
    run.name,
    strategyName,
    {
      seq: snapshot.seq,
      ...compact({ slot: snapshot.slot, epoch: snapshot.epoch }),
      revision: head.revision,
    },
    journal,
    seq,
    epoch,
  );
  return { run, log };
}

function snapshotText(
  name: string,
  snapshot: Snapshot,
  entries: readonly Entry<Stored>[],
): string {
  if (snapshot.text !== undefined) return snapshot.text;
  const { slot, parts } = snapshot;
  if (slot === undefined || parts === undefined) {
    throw new Error(`runs/${name}: the head names no snapshot`);
  }
  const byKey = new Map(entries.map((e) => [e.key, e.value]));
  let text = "";
  for (let i = 0; i < parts; i++) {
    const part = byKey.get(runSnapshotPartKey(name, slot, i));
    if (part === undefined || !("part" in part)) {
      throw new Error(
        `runs/${name}: part ${String(i)} of ${String(parts)} of its snapshot is missing`,
      );
    }
    text += part.part;
  }
  return text;
}
