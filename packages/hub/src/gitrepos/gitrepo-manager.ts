/**
 * The GitRepo manager (docs/gitops.md): git repositories as a source of bundles. Specs, credentials
 * (a key of their own: reading a spec never reads them), statuses and the claims of bundle names
 * live in the state store, written with compare-and-set. The replica that owns the `gitrepos`
 * lease polls each repository (its interval, jittered; one sync at a time per repository; a few
 * repositories at once) and syncs at once on a webhook or `sync`.
 *
 * A sync (docs/gitops.md#sync): resolve the branch; when the commit is new, check it out, find its
 * bundle directories, read and check every bundle, and only when all are good apply them (the
 * bundle manager makes a revision only for changed content) and delete the bundles of
 * directories that are gone. Anything wrong leaves every bundle as it was and says why in
 * `lastError`, naming the commit and the directory.
 */
import { join } from "node:path";
import { realpath, stat } from "node:fs/promises";
import { z } from "zod";
import {
  compact,
  FlotillaError,
  formatProblem,
  type BundleDir,
  type Problem,
} from "@flotilla/core";
import { fileSystemBundleDirIo, readBundleDir } from "@flotilla/node";
import { bundleSpec, filesToUpload, type wire } from "@flotilla/protocol";
import type { BundleManager } from "../bundles/bundle-manager.js";
import type { Logger } from "../logger.js";
import {
  defineCollection,
  isRevisionConflict,
  type OperationOptions,
  type StateStore,
} from "../store/state-store.js";
import { bundleDirs, bundleNameOf } from "./bundle-dirs.js";
import { GitError, type GitClient, type GitRemote } from "./git-client.js";
import { checkGitRepoInput } from "./gitrepo-input.js";
import type {
  GitRepoBundleStatus,
  GitRepoCredentials,
  GitRepoError,
  GitRepoInput,
  GitRepoService,
  GitRepoSpec,
  GitRepoStatus,
} from "./gitrepo-service.js";

/** A repository's stored spec (collection `gitrepos`). */
interface GitRepoRecord {
  readonly spec: GitRepoSpec;
  readonly credentials?: GitRepoCredentials["kind"];
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  /** A `sync` asked of another replica: the owner syncs when it sees a newer one. */
  readonly syncRequestedAtMs?: number;
}

/** A bundle a repository owns, as its last applied commit made it. */
interface OwnedBundle {
  readonly bundle: string;
  readonly path: string;
  readonly revision: string;
}

/** What the syncs found (collection `gitrepo-status`). */
interface GitRepoState {
  readonly commitSeen?: string;
  readonly commitDeployed?: string;
  /** The deployed commit's committer time (the force-push check fetches history back to it). */
  readonly commitDeployedTimeSec?: number;
  /** The spec the deployed commit was applied with (a changed spec applies the commit again). */
  readonly deployedSpec?: string;
  /** The repository and branch the deployed commit came from (the force-push check's scope). */
  readonly deployedFrom?: string;
  readonly lastError?: GitRepoError;
  readonly lastSyncAtMs?: number;
  readonly bundles: readonly OwnedBundle[];
}

const specSchema = z.object({
  name: z.string(),
  repo: z.string(),
  branch: z.string().optional(),
  revision: z.string().optional(),
  paths: z.array(z.string()),
  pollIntervalSeconds: z.number(),
  updateStrategyName: z.string().optional(),
  deleteRemoved: z.boolean(),
});

const REPOS = defineCollection<GitRepoRecord>("gitrepos", (value) =>
  z
    .object({
      spec: specSchema,
      credentials: z.enum(["token", "ssh"]).optional(),
      createdAtMs: z.number(),
      updatedAtMs: z.number(),
      syncRequestedAtMs: z.number().optional(),
    })
    .parse(value),
);

const CREDENTIALS = defineCollection<GitRepoCredentials>(
  "gitrepo-credentials",
  (value) =>
    z
      .discriminatedUnion("kind", [
        z.object({
          kind: z.literal("token"),
          username: z.string().optional(),
          token: z.string(),
        }),
        z.object({
          kind: z.literal("ssh"),
          privateKey: z.string(),
          knownHosts: z.string().optional(),
        }),
      ])
      .parse(value),
);

const STATES = defineCollection<GitRepoState>("gitrepo-status", (value) =>
  z
    .object({
      commitSeen: z.string().optional(),
      commitDeployed: z.string().optional(),
      commitDeployedTimeSec: z.number().optional(),
      deployedSpec: z.string().optional(),
      deployedFrom: z.string().optional(),
      lastError: z
        .object({
          message: z.string(),
          commit: z.string().optional(),
          atMs: z.number(),
        })
        .optional(),
      lastSyncAtMs: z.number().optional(),
      bundles: z.array(
        z.object({
          bundle: z.string(),
          path: z.string(),
          revision: z.string(),
        }),
      ),
    })
    .parse(value),
);

/** Which repository made a bundle (collection `gitrepo-bundles`, keyed by bundle name). */
const CLAIMS = defineCollection<{ readonly repo: string }>(
  "gitrepo-bundles",
  (value) => z.object({ repo: z.string() }).parse(value),
);

const EMPTY_STATE: GitRepoState = { bundles: [] };

/** `state` without its `key` field. */
function withoutKey(
  state: GitRepoState,
  key: "lastError" | "deployedFrom",
): GitRepoState {
  const copy: Partial<Record<keyof GitRepoState, unknown>> = { ...state };
  // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- one of two named keys
  delete copy[key];
  return copy as GitRepoState;
}

/** What the manager needs of the bundle manager. */
export type GitRepoBundles = Pick<
  BundleManager,
  "apply" | "check" | "delete" | "list" | "storeUpload"
>;

export interface GitRepoManagerDeps {
  readonly store: StateStore;
  readonly bundles: GitRepoBundles;
  readonly git: GitClient;
  readonly now: () => number;
  readonly log: Logger;
  /** Whether this replica syncs repositories now (the owner of the `gitrepos` lease). */
  readonly owns?: () => boolean;
  /** In [0, 1): spreads polls (default Math.random). */
  readonly random?: () => number;
  /** Starts a repeating timer and returns its cancel; default `setInterval` (unref'd). */
  readonly every?: (intervalMs: number, tick: () => void) => () => void;
  /**
   * Whether an update strategy is stored, so that a repository naming one that is not is refused
   * when added (docs/gitops.md#staged-rollouts); absent: found out at the first sync.
   */
  readonly strategyExists?: (name: string) => boolean;
}

export interface GitRepoManagerOptions {
  /** Repositories synced at once (default 4). */
  readonly concurrency?: number;
  /** How often due polls are looked for (default 1 s). */
  readonly tickMs?: number;
}

/** The GitRepo manager: the admin API's GitRepoService, plus what the hub drives. */
export interface GitRepoManager extends GitRepoService {
  /** Loads the stored repositories and starts polling (on the owner). */
  start(): Promise<void>;
  /** Stops polling and waits for running syncs. */
  stop(): Promise<void>;
  /**
   * Syncs soon every repository whose URL is one of `urls` (a webhook: docs/gitops.md#webhooks);
   * resolves with their names.
   */
  syncByUrl(urls: readonly string[]): string[];
  /** Looks for due polls now (the timer calls it; the hub also when it gains the lease). */
  tick(): void;
  /** Resolves once no sync is running or queued. */
  idle(): Promise<void>;
}

const DEFAULT_CONCURRENCY = 4;
/** How long a non-owner's `sync` waits for the owner's attempt. */
const REMOTE_SYNC_WAIT_MS = 120_000;
/** A bundle's state in a repository's status is looked at again this often by `watch`. */
const WATCH_REFRESH_MS = 2_000;

const notFound = (name: string): FlotillaError =>
  new FlotillaError("not_found", `GitRepo "${name}" not found`);

const defaultEvery = (intervalMs: number, tick: () => void): (() => void) => {
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
};

/** The part of a spec that decides what a commit deploys. */
const deployedSpecOf = (spec: GitRepoSpec): string =>
  JSON.stringify([spec.paths, spec.deleteRemoved, spec.updateStrategyName]);
const sourceOf = (spec: GitRepoSpec): string =>
  JSON.stringify([spec.repo, spec.branch ?? "", spec.revision ?? ""]);

/** A URL as webhooks and specs are compared: lower-case host, no `.git`, no trailing `/`. */
export function comparableUrl(url: string): string {
  return url
    .trim()
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .replace(/^[a-z+]+:\/\/(?:[^@/]*@)?/i, "")
    .replace(/^[^@/]+@([^:/]+):/, "$1/")
    .toLowerCase();
}

/** A bundle read from a checkout, ready to apply. */
interface ReadBundle {
  readonly name: string;
  readonly path: string;
  readonly dir: BundleDir;
}

export function createGitRepoManager(
  deps: GitRepoManagerDeps,
  options: GitRepoManagerOptions = {},
): GitRepoManager {
  const { store, bundles, git, log } = deps;
  const owns = deps.owns ?? (() => true);
  const random = deps.random ?? Math.random;
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  /** Per repository: when it is next due, and its chain of syncs (one at a time). */
  const repos = new Map<
    string,
    {
      nextAtMs: number;
      chain: Promise<void>;
      queued: boolean;
      requestedAtMs: number;
      /** The repository's URL as webhooks name it ({@link comparableUrl}). */
      url: string;
    }
  >();
  let running = 0;
  const waiting: (() => void)[] = [];
  let cancelTimer: (() => void) | undefined;
  const following = new AbortController();
  /** Aborted by `stop`: running git commands are killed rather than waited for. */
  const stopping = new AbortController();
  let followDone: Promise<void> = Promise.resolve();

  const jittered = (seconds: number): number =>
    seconds * 1000 * (0.9 + 0.2 * random());

  /** Takes one of the `concurrency` slots. */
  const slot = async (): Promise<() => void> => {
    if (running >= concurrency)
      await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    return () => {
      running -= 1;
      waiting.shift()?.();
    };
  };

  const readState = async (name: string) => {
    const entry = await store.get(STATES, name);
    return {
      value: entry?.value ?? EMPTY_STATE,
      revision: entry?.revision ?? 0,
    };
  };

  /** Changes the stored state with compare-and-set, retrying on a conflict. */
  const updateState = async (
    name: string,
    change: (state: GitRepoState) => GitRepoState,
  ): Promise<GitRepoState> => {
    for (;;) {
      const { value, revision } = await readState(name);
      const next = change(value);
      try {
        await store.put(STATES, name, next, { expectedRevision: revision });
        return next;
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
      }
    }
  };

  const failSync = async (
    name: string,
    message: string,
    commit?: string,
    seen?: string,
  ): Promise<void> => {
    // A sync cut short by a stop is no failure of the repository: the next owner syncs again.
    if (stopping.signal.aborted) return;
    const atMs = deps.now();
    log.warn({ gitrepo: name, commit, err: message }, "GitRepo sync failed");
    await updateState(name, (s) => ({
      ...s,
      ...compact({ commitSeen: seen ?? s.commitSeen }),
      lastError: compact({ message, commit, atMs }),
      lastSyncAtMs: atMs,
    }));
  };

  /** Reads every bundle directory of `root` under `paths`; problems name the directory. */
  const readBundles = async (
    repoName: string,
    root: string,
    paths: readonly string[],
  ): Promise<{ bundles: ReadBundle[]; problems: string[] }> => {
    const problems: string[] = [];
    const found = new Map<string, ReadBundle>();
    const top = await realpath(root);
    for (const path of paths) {
      // A symbolic link in the commit must not lead the reader out of the checkout.
      const dir = await realpath(join(root, path)).catch(() => undefined);
      const inside =
        dir !== undefined && (dir === top || dir.startsWith(`${top}/`));
      const isDir =
        inside &&
        (await stat(dir).then(
          (s) => s.isDirectory(),
          () => false,
        ));
      if (!isDir) {
        problems.push(
          dir !== undefined && !inside
            ? `${path}: a symbolic link out of the repository`
            : `${path}: no such directory in the commit`,
        );
        continue;
      }
      for (const sub of await bundleDirs(root, path)) {
        if ([...found.values()].some((b) => b.path === sub)) continue;
        const read = await readBundleDir(
          fileSystemBundleDirIo,
          join(root, sub),
          {
            skipNestedBundles: true,
          },
        );
        const show = (p: Problem): string =>
          formatProblem({
            ...p,
            path: p.path.startsWith(root)
              ? p.path.slice(root.length + 1)
              : p.path,
          });
        if (!read.ok) {
          problems.push(...read.problems.map(show));
          continue;
        }
        const name = read.value.fleet.name ?? bundleNameOf(repoName, sub);
        const other = found.get(name);
        if (other !== undefined) {
          problems.push(
            `${sub}: its bundle name ${name} is also the name of ${other.path}'s bundle`,
          );
          continue;
        }
        found.set(name, { name, path: sub, dir: read.value });
      }
    }
    return { bundles: [...found.values()], problems };
  };

  /** The wire spec of a bundle, its larger files stored as objects first. */
  const specOf = async (
    b: ReadBundle,
    updateStrategy: string | undefined,
    signal?: AbortSignal,
  ): Promise<wire.BundleSpec__Output> => {
    const all = [...b.dir.manifests, ...b.dir.files];
    const upload = filesToUpload(all);
    const objects = new Map<string, { digest: string; sizeBytes: number }>();
    for (const m of all)
      if (upload.has(m.path))
        objects.set(m.path, {
          digest: await bundles.storeUpload(m.content, compact({ signal })),
          sizeBytes: m.content.byteLength,
        });
    // The repository's update strategy stages every bundle (docs/gitops.md#staged-rollouts).
    const spec = bundleSpec(
      b.dir,
      { name: b.name, ...compact({ updateStrategy }) },
      (m) => {
        const object = objects.get(m.path);
        return object === undefined
          ? { yaml: Buffer.from(m.content) }
          : { object };
      },
    );
    // The wire defaults a gRPC request would carry.
    return { namespace: "", ...spec } as wire.BundleSpec__Output;
  };

  /** Claims `bundle` for `repo`; false when another repository holds it. */
  const claim = async (bundle: string, repo: string): Promise<boolean> => {
    const held = await store.get(CLAIMS, bundle);
    if (held !== undefined) return held.value.repo === repo;
    try {
      await store.put(CLAIMS, bundle, { repo }, { expectedRevision: 0 });
      return true;
    } catch (error) {
      if (!isRevisionConflict(error)) throw error;
      return (await store.get(CLAIMS, bundle))?.value.repo === repo;
    }
  };

  const release = async (bundle: string, repo: string): Promise<void> => {
    const held = await store.get(CLAIMS, bundle);
    if (held?.value.repo === repo)
      await store.delete(CLAIMS, bundle, { expectedRevision: held.revision });
  };

  /** One sync of `name` (docs/gitops.md#sync). */
  const syncOnce = async (
    name: string,
    signal?: AbortSignal,
  ): Promise<void> => {
    const entry = await store.get(REPOS, name);
    if (entry === undefined) return;
    const { spec } = entry.value;
    const credentials =
      entry.value.credentials === undefined
        ? undefined
        : (await store.get(CREDENTIALS, name))?.value;
    // A repository being added: its credentials are written right after its record.
    if (entry.value.credentials !== undefined && credentials === undefined)
      return;
    const remote: GitRemote = compact({ url: spec.repo, credentials });
    const { value: state } = await readState(name);
    let commit: string;
    try {
      commit = await git.resolve(
        remote,
        compact({ branch: spec.branch, revision: spec.revision }),
        signal,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await failSync(
        name,
        error instanceof GitError && error.kind === "branch_not_found"
          ? `${message}; the bundles stay as the last applied commit left them`
          : message,
      );
      return;
    }
    const short = commit.slice(0, 12);
    if (
      commit === state.commitDeployed &&
      state.deployedSpec === deployedSpecOf(spec) &&
      state.deployedFrom === sourceOf(spec)
    ) {
      await updateState(name, (s) =>
        withoutKey(
          { ...s, commitSeen: commit, lastSyncAtMs: deps.now() },
          "lastError",
        ),
      );
      return;
    }
    // A branch followed before must move forward: a rewritten history applies nothing.
    const ancestor =
      spec.revision === undefined &&
      state.deployedFrom === sourceOf(spec) &&
      state.commitDeployed !== undefined &&
      state.commitDeployed !== commit &&
      state.commitDeployedTimeSec !== undefined
        ? { commit: state.commitDeployed, timeSec: state.commitDeployedTimeSec }
        : undefined;
    let checkout;
    try {
      checkout = await git.checkout(
        remote,
        commit,
        compact({ signal, ancestor }),
      );
    } catch (error) {
      await failSync(
        name,
        error instanceof Error ? error.message : String(error),
        commit,
        commit,
      );
      return;
    }
    try {
      if (ancestor !== undefined && checkout.descends === false) {
        await failSync(
          name,
          `commit ${short} does not descend from the deployed commit ${ancestor.commit.slice(0, 12)}: the branch's history was rewritten (force push); nothing applied. Update the GitRepo to deploy the new history (docs/gitops.md#force-pushes)`,
          commit,
          commit,
        );
        return;
      }
      const read = await readBundles(name, checkout.dir, spec.paths);
      if (read.problems.length > 0) {
        await failSync(
          name,
          `commit ${short}: nothing applied: ${read.problems.join("; ")}`,
          commit,
          commit,
        );
        return;
      }
      const owned = new Set(state.bundles.map((b) => b.bundle));
      const existing = new Set(
        (await bundles.list()).map((b) => b.record.name),
      );
      const refused: string[] = [];
      for (const b of read.bundles) {
        if (owned.has(b.name)) continue;
        const held = await store.get(CLAIMS, b.name);
        if (held !== undefined && held.value.repo !== name)
          refused.push(
            `${b.path}: bundle ${b.name} belongs to GitRepo ${held.value.repo}`,
          );
        else if (held === undefined && existing.has(b.name))
          refused.push(
            `${b.path}: bundle ${b.name} exists and was not made by this GitRepo (bundle apply?); rename it in fleet.yaml or delete the bundle`,
          );
      }
      // Every bundle is checked as ApplyBundle checks it before any is applied.
      const specs: wire.BundleSpec__Output[] = [];
      for (const b of read.bundles) {
        const wireSpec = await specOf(b, spec.updateStrategyName, signal);
        try {
          await bundles.check(wireSpec, compact({ signal }));
        } catch (error) {
          const e = FlotillaError.from(error);
          refused.push(
            e.problems.length > 0
              ? `${b.path}: ${e.problems.map(formatProblem).join("; ")}`
              : `${b.path}: ${e.message}`,
          );
        }
        specs.push(wireSpec);
      }
      if (refused.length > 0) {
        await failSync(
          name,
          `commit ${short}: nothing applied: ${refused.join("; ")}`,
          commit,
          commit,
        );
        return;
      }
      const applied: OwnedBundle[] = [];
      for (const [i, b] of read.bundles.entries()) {
        if (!(await claim(b.name, name))) {
          await failSync(
            name,
            `commit ${short}: ${b.path}: bundle ${b.name} was claimed by another GitRepo meanwhile`,
            commit,
            commit,
          );
          return;
        }
        // A commit that did not change a rolled-back bundle must not release the revision rolled
        // back from again (docs/semantics.md#rolling-back-a-bundle).
        const result = await bundles.apply(
          specs[i],
          `GitRepo ${name} at commit ${short}`,
          { ...compact({ signal }), skipRolledBack: true },
        );
        for (const w of result.warnings)
          if (w.code === "RolledBackRevision")
            log.warn(
              { gitrepo: name, bundle: b.name, commit, message: w.message },
              "GitRepo sync did not store a revision rolled back from",
            );
        applied.push({
          bundle: b.name,
          path: b.path,
          revision: result.bundle.record.revision,
        });
      }
      const keep = new Set(applied.map((b) => b.bundle));
      const gone = state.bundles.filter((b) => !keep.has(b.bundle));
      const kept: OwnedBundle[] = [];
      for (const b of gone) {
        if (!spec.deleteRemoved) {
          kept.push(b);
          continue;
        }
        try {
          await bundles.delete(b.bundle, `GitRepo ${name}: ${b.path} removed`);
        } catch (error) {
          if (FlotillaError.from(error).code !== "not_found") throw error;
        }
        await release(b.bundle, name);
      }
      const atMs = deps.now();
      await updateState(name, () => ({
        commitSeen: commit,
        commitDeployed: commit,
        commitDeployedTimeSec: checkout.commitTimeSec,
        deployedSpec: deployedSpecOf(spec),
        deployedFrom: sourceOf(spec),
        lastSyncAtMs: atMs,
        bundles: [...applied, ...kept].sort((a, b) =>
          a.bundle < b.bundle ? -1 : a.bundle > b.bundle ? 1 : 0,
        ),
      }));
      log.info(
        {
          gitrepo: name,
          commit,
          bundles: applied.length,
          deleted: gone.length - kept.length,
        },
        "GitRepo synced",
      );
    } catch (error) {
      await failSync(
        name,
        `commit ${short}: ${FlotillaError.from(error).message}`,
        commit,
        commit,
      );
    } finally {
      await checkout.dispose();
    }
  };

  const track = (name: string, nextAtMs: number, url?: string) => {
    let r = repos.get(name);
    if (r === undefined) {
      r = {
        nextAtMs,
        chain: Promise.resolve(),
        queued: false,
        requestedAtMs: 0,
        url: "",
      };
      repos.set(name, r);
    }
    if (url !== undefined) r.url = comparableUrl(url);
    return r;
  };

  /** Asks the owner (another replica) to sync `name`, through its record; resolves with the time. */
  const requestSync = async (name: string): Promise<number> => {
    for (;;) {
      const entry = await store.get(REPOS, name);
      if (entry === undefined) throw notFound(name);
      const requestedAtMs = deps.now();
      try {
        await store.put(
          REPOS,
          name,
          { ...entry.value, syncRequestedAtMs: requestedAtMs },
          { expectedRevision: entry.revision },
        );
        return requestedAtMs;
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
      }
    }
  };

  /** Queues a sync of `name` after any running one; resolves when it has run. */
  const enqueue = (name: string): Promise<void> => {
    const r = track(name, deps.now());
    if (r.queued) return r.chain;
    r.queued = true;
    r.chain = r.chain.then(async () => {
      r.queued = false;
      const done = await slot();
      try {
        if (!stopping.signal.aborted) await syncOnce(name, stopping.signal);
      } catch (error) {
        log.error({ gitrepo: name, err: error }, "GitRepo sync failed");
      } finally {
        done();
        const spec = (await store.get(REPOS, name).catch(() => undefined))
          ?.value.spec;
        if (spec !== undefined)
          r.nextAtMs = deps.now() + jittered(spec.pollIntervalSeconds);
        else repos.delete(name);
      }
    });
    return r.chain;
  };

  const tick = (): void => {
    if (!owns()) return;
    const at = deps.now();
    for (const [name, r] of repos)
      if (r.nextAtMs <= at && !r.queued) void enqueue(name);
  };

  const statusOf = async (
    name: string,
    record: GitRepoRecord,
  ): Promise<GitRepoStatus> => {
    const { value: state } = await readState(name);
    const summaries = state.bundles.length === 0 ? [] : await bundles.list();
    const byName = new Map(summaries.map((s) => [s.record.name, s]));
    const bundleStatuses: GitRepoBundleStatus[] = state.bundles.map((b) => {
      const summary = byName.get(b.bundle);
      const c = summary?.counts;
      const parts =
        c === undefined
          ? ["deleted"]
          : [
              `${String(c.ready)}/${String(c.targets)} Ready`,
              ...(
                [
                  [c.notReady, "NotReady"],
                  [c.modified, "Modified"],
                  [c.errApplied, "ErrApplied"],
                  [c.waitApplied, "WaitApplied"],
                  [c.outOfSync, "OutOfSync"],
                  [c.pending, "Pending"],
                ] as const
              )
                .filter(([n]) => n > 0)
                .map(([n, what]) => `${String(n)} ${what}`),
            ];
      return {
        bundle: b.bundle,
        path: b.path,
        revision: summary?.record.revision ?? b.revision,
        ready: c?.ready ?? 0,
        targets: c?.targets ?? 0,
        summary: parts.join(", "),
      };
    });
    return {
      spec: record.spec,
      ...compact({
        credentials: record.credentials,
        commitSeen: state.commitSeen,
        commitDeployed: state.commitDeployed,
        lastError: state.lastError,
        lastSyncAtMs: state.lastSyncAtMs,
      }),
      bundles: bundleStatuses,
      createdAtMs: record.createdAtMs,
      updatedAtMs: record.updatedAtMs,
    };
  };

  const getRecord = async (name: string, options?: OperationOptions) => {
    const entry = await store.get(REPOS, name, options);
    if (entry === undefined) throw notFound(name);
    return entry;
  };

  const checked = (input: GitRepoInput): GitRepoSpec => {
    const result = checkGitRepoInput(input);
    if (!result.ok) throw FlotillaError.invalid("GitRepo", result.problems);
    const strategy = result.spec.updateStrategyName;
    if (strategy !== undefined && deps.strategyExists?.(strategy) === false)
      throw FlotillaError.invalid("GitRepo", [
        {
          path: "updateStrategyName",
          message: "is not a stored update strategy (flotilla strategy list)",
          value: strategy,
        },
      ]);
    return result.spec;
  };

  /** A change of a repository's record seen (here or from another replica). */
  const onRecord = (name: string, record: GitRepoRecord | undefined): void => {
    if (record === undefined) {
      repos.delete(name);
      return;
    }
    const r = track(name, deps.now(), record.spec.repo);
    if ((record.syncRequestedAtMs ?? 0) > r.requestedAtMs) {
      r.requestedAtMs = record.syncRequestedAtMs ?? 0;
      r.nextAtMs = deps.now();
    }
    tick();
  };

  const follow = async (): Promise<void> => {
    const changes = await store.watch(REPOS, { signal: following.signal });
    followDone = (async () => {
      try {
        for await (const change of changes)
          onRecord(
            change.key,
            change.type === "put" ? change.value : undefined,
          );
      } catch (error) {
        if (!following.signal.aborted)
          log.error({ err: error }, "GitRepo watch ended");
      }
    })();
  };

  return {
    async start() {
      await follow();
      for (const entry of await store.list(REPOS)) {
        // Spread the first polls of a restarted hub over their intervals.
        track(
          entry.key,
          deps.now() +
            jittered(entry.value.spec.pollIntervalSeconds) * random(),
          entry.value.spec.repo,
        );
      }
      cancelTimer = (deps.every ?? defaultEvery)(options.tickMs ?? 1_000, tick);
    },

    async stop() {
      cancelTimer?.();
      following.abort();
      stopping.abort();
      await followDone;
      await Promise.all([...repos.values()].map((r) => r.chain));
    },

    async add(input, opts) {
      const spec = checked(input);
      const atMs = deps.now();
      if ((await store.get(REPOS, spec.name, opts)) === undefined) {
        // What a delete cut short may have left of an earlier repository of the name.
        await store.delete(STATES, spec.name, opts);
        await store.delete(CREDENTIALS, spec.name, opts);
      }
      const record: GitRepoRecord = compact({
        spec,
        credentials: input.credentials?.kind,
        createdAtMs: atMs,
        updatedAtMs: atMs,
      });
      try {
        await store.put(REPOS, spec.name, record, {
          ...opts,
          expectedRevision: 0,
        });
      } catch (error) {
        if (isRevisionConflict(error))
          throw new FlotillaError(
            "already_exists",
            `GitRepo "${spec.name}" already exists`,
          );
        throw error;
      }
      if (input.credentials !== undefined && input.credentials !== null)
        await store.put(CREDENTIALS, spec.name, input.credentials, opts);
      onRecord(spec.name, record);
      return statusOf(spec.name, record);
    },

    async update(input, opts) {
      const spec = checked(input);
      const entry = await getRecord(spec.name, opts);
      const kind =
        input.credentials === undefined
          ? entry.value.credentials
          : input.credentials?.kind;
      const record: GitRepoRecord = compact({
        spec,
        credentials: kind,
        createdAtMs: entry.value.createdAtMs,
        updatedAtMs: deps.now(),
      });
      if (input.credentials !== undefined) {
        if (input.credentials === null)
          await store.delete(CREDENTIALS, spec.name, opts);
        else await store.put(CREDENTIALS, spec.name, input.credentials, opts);
      }
      await store.put(REPOS, spec.name, record, {
        ...opts,
        expectedRevision: entry.revision,
      });
      // Any update accepts the branch's history as it is now (docs/gitops.md#force-pushes).
      await updateState(spec.name, (s) => withoutKey(s, "deployedFrom"));
      onRecord(spec.name, record);
      const r = repos.get(spec.name);
      if (r !== undefined) r.nextAtMs = deps.now();
      tick();
      return statusOf(spec.name, record);
    },

    async delete(name, deleteBundles, opts) {
      const entry = await getRecord(name, opts);
      const { value: state } = await readState(name);
      await store.delete(REPOS, name, {
        ...opts,
        expectedRevision: entry.revision,
      });
      await repos.get(name)?.chain;
      repos.delete(name);
      for (const b of state.bundles) {
        if (deleteBundles)
          await bundles
            .delete(b.bundle, `GitRepo ${name} deleted`)
            .catch((error: unknown) => {
              if (FlotillaError.from(error).code !== "not_found") throw error;
            });
        await release(b.bundle, name);
      }
      await store.delete(STATES, name, opts);
      await store.delete(CREDENTIALS, name, opts);
    },

    async get(name, opts) {
      const entry = await getRecord(name, opts);
      return statusOf(name, entry.value);
    },

    async list(opts) {
      const entries = await store.list(REPOS, opts);
      return Promise.all(entries.map((e) => statusOf(e.key, e.value)));
    },

    async sync(name, opts) {
      await getRecord(name, opts);
      if (owns()) {
        await enqueue(name);
        return statusOf(name, (await getRecord(name, opts)).value);
      }
      // Another replica owns the syncs: ask it through the record, and wait for its attempt.
      const requestedAtMs = await requestSync(name);
      const deadline = Date.now() + REMOTE_SYNC_WAIT_MS;
      const watching = new AbortController();
      const abort = (): void => {
        watching.abort();
      };
      opts?.signal?.addEventListener("abort", abort, { once: true });
      try {
        const changes = await store.watch(STATES, {
          signal: watching.signal,
          prefix: name,
        });
        const settled = async () =>
          ((await readState(name)).value.lastSyncAtMs ?? 0) >= requestedAtMs;
        if (!(await settled())) {
          const timer = setTimeout(abort, Math.max(0, deadline - Date.now()));
          try {
            for await (const change of changes)
              if (change.key === name && (await settled())) break;
          } finally {
            clearTimeout(timer);
          }
        }
      } finally {
        watching.abort();
        opts?.signal?.removeEventListener("abort", abort);
      }
      return statusOf(name, (await getRecord(name, opts)).value);
    },

    async *watch(name, signal) {
      await getRecord(name);
      // The store's watches end with this, whether the caller aborts or stops iterating.
      const inner = new AbortController();
      const onAbort = (): void => {
        inner.abort();
      };
      if (signal.aborted) inner.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      // A change seen while the status is being read is kept for the next wait.
      let changed = false;
      const wake: { notify: () => void } = {
        notify: () => {
          changed = true;
        },
      };
      try {
        const changes = await Promise.all([
          store.watch(REPOS, { signal: inner.signal, prefix: name }),
          store.watch(STATES, { signal: inner.signal, prefix: name }),
        ]);
        for (const c of changes)
          void (async () => {
            try {
              for await (const change of c)
                if (change.key === name) wake.notify();
            } catch {
              // the watch ends with the signal
            }
          })();
        let last = "";
        while (!inner.signal.aborted) {
          const entry = await store.get(REPOS, name);
          if (entry === undefined) return;
          const status = await statusOf(name, entry.value);
          const text = JSON.stringify(status);
          if (text !== last) {
            last = text;
            yield status;
          }
          // A change of the record or the state wakes this at once; bundle counts change
          // without either, so they are looked at again every few seconds.
          if (changed) {
            changed = false;
            continue;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, WATCH_REFRESH_MS);
            function done(): void {
              clearTimeout(timer);
              inner.signal.removeEventListener("abort", done);
              wake.notify = () => {
                changed = true;
              };
              resolve();
            }
            wake.notify = done;
            inner.signal.addEventListener("abort", done, { once: true });
          });
        }
      } finally {
        signal.removeEventListener("abort", onAbort);
        inner.abort();
      }
    },

    syncByUrl(urls) {
      const wanted = new Set(urls.map(comparableUrl));
      const names = [...repos]
        .filter(([, r]) => wanted.has(r.url))
        .map(([name]) => name);
      for (const name of names) {
        if (owns()) {
          const r = repos.get(name);
          if (r !== undefined) r.nextAtMs = deps.now();
          continue;
        }
        // The owner syncs when it sees the request in the record.
        void requestSync(name).catch((error: unknown) => {
          log.warn(
            { gitrepo: name, err: error },
            "GitRepo sync request failed",
          );
        });
      }
      tick();
      return names;
    },

    tick,

    async idle() {
      await Promise.all([...repos.values()].map((r) => r.chain));
    },
  };
}
