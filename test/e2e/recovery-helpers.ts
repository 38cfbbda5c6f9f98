/**
 * Small helpers of the recovery tests (recovery*.test.ts): the operator's CLI calls that must
 * succeed, run snapshots by member, cluster state as `flotilla cluster get` shows it, and
 * waiting on runs with a check applied to every snapshot on the way.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { callUnary, type MemberView, type RunView } from "@flotilla/protocol";
import { waitFor } from "@flotilla/testkit";
import { clusters, fleetFile, type E2E } from "./fleet.js";
import { slowUpgrades } from "./recovery-env.js";

/** Runs `flotilla ARGS` and returns its stdout; throws with stderr when it exits non-zero. */
export async function ok(e2e: E2E, ...args: string[]): Promise<string> {
  const result = await e2e.cli(...args);
  if (result.code !== 0) {
    throw new Error(
      `flotilla ${args.join(" ")} exited ${String(result.code)}:\n${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

/** Writes `value` as JSON to DIR/NAME and returns the path. */
export async function writeJson(
  dir: string,
  name: string,
  value: unknown,
): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(value));
  return file;
}

/** Every member of a run, by name. */
export function membersOf(run: RunView): Map<string, MemberView> {
  return new Map(
    run.stages.flatMap((s) =>
      s.groups.flatMap((g) => g.members.map((m) => [m.name, m] as const)),
    ),
  );
}

/** Names of the run's members in `state`, sorted. */
export function namesIn(run: RunView, state: MemberView["state"]): string[] {
  return [...membersOf(run).values()]
    .filter((m) => m.state === state)
    .map((m) => m.name)
    .sort();
}

/** A cluster as `flotilla cluster get NAME -o json` prints it (the fields these tests read). */
export interface ClusterJson {
  readonly name: string;
  readonly connection: string;
  readonly intentGeneration: number;
  readonly appliedGeneration: number;
  readonly facts: { readonly kubernetesVersion?: string };
}

/** `flotilla cluster get NAME -o json`. */
export async function clusterGet(e2e: E2E, name: string): Promise<ClusterJson> {
  const got = JSON.parse(
    await ok(e2e, "cluster", "get", name, "-o", "json"),
  ) as {
    cluster: ClusterJson;
  };
  return got.cluster;
}

/**
 * Polls `sample()` until `done(value)` holds, calling `check(value)` on every sample first: a
 * throw there fails at once (not at the timeout, as a throw inside `waitFor` would). A sample
 * that throws counts as "not yet". Resolves with the last sample.
 */
export async function pollUntil<T>(
  sample: () => Promise<T>,
  done: (value: T) => boolean,
  options: {
    check?: (value: T) => void;
    timeoutMs?: number;
    intervalMs?: number;
    message: string;
  },
): Promise<T> {
  const broken = new AbortController();
  const result = await waitFor(
    async () => {
      const value = await sample();
      try {
        options.check?.(value);
      } catch (error) {
        broken.abort(error);
        return undefined;
      }
      return done(value) ? { value } : undefined;
    },
    {
      timeoutMs: options.timeoutMs ?? 40_000,
      intervalMs: options.intervalMs ?? 100,
      message: options.message,
      signal: broken.signal,
    },
  );
  return result.value;
}

/** {@link pollUntil} over the run as the hub reports it. */
export function watchRun(
  e2e: E2E,
  name: string,
  done: (run: RunView) => boolean,
  options: {
    check?: (run: RunView) => void;
    timeoutMs?: number;
    message: string;
  },
): Promise<RunView> {
  return pollUntil(() => e2e.run(name), done, options);
}

/**
 * Applies bundle NAME (one ConfigMap, to every cluster, all at once) from a directory under
 * `dir`, and waits until it is Ready on `targets` clusters.
 */
export async function rollOutBundle(
  e2e: E2E,
  dir: string,
  name: string,
  targets: number,
): Promise<void> {
  const bundle = join(dir, name);
  await mkdir(bundle, { recursive: true });
  await writeFile(
    join(bundle, "fleet.yaml"),
    [
      "namespace: apps",
      "targets:",
      "  - name: everything",
      "    clusterSelector: {}",
      "rolloutStrategy:",
      "  maxUnavailable: 100%",
      "",
    ].join("\n"),
  );
  await writeFile(
    join(bundle, "config.yaml"),
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: hello\n`,
  );
  await ok(e2e, "bundle", "apply", bundle, "--name", name);
  await waitFor(
    async () => {
      const { bundle: got } = await callUnary(e2e.admin, "getBundle", { name });
      return got?.counts?.targets === targets && got.counts.ready === targets;
    },
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      message: `bundle ${name} to be Ready on ${String(targets)} clusters`,
    },
  );
}

/** Creates update strategy NAME with these stages (written to a file under `dir`). */
export async function createStrategy(
  e2e: E2E,
  dir: string,
  name: string,
  stages: readonly Record<string, unknown>[],
): Promise<void> {
  const file = await writeJson(dir, `${name}.json`, { stages });
  await ok(e2e, "strategy", "create", name, "-f", file);
}

/** Creates run RUN upgrading Kubernetes to `version` with strategy STRATEGY, and starts it. */
export async function startUpgrade(
  e2e: E2E,
  run: string,
  strategy: string,
  version = "1.30.3",
): Promise<void> {
  await ok(
    e2e,
    "run",
    "create",
    run,
    "--strategy",
    strategy,
    "--kubernetes-version",
    version,
  );
  await ok(e2e, "run", "start", run);
}

/** One ring of {@link startRingRollout}: `count` clusters named `<name>-NN`, one stage. */
export interface Ring {
  readonly name: string;
  readonly count: number;
  readonly maxConcurrency?: number;
}

/**
 * The rollout the failover tests interrupt: agents for every ring's clusters (slow simulated
 * upgrades, label `ring=<name>`), strategy `rings` with one stage per ring in order, and run `up`
 * upgrading them all, started and followed until `succeeded` members are done and one is running.
 */
export async function startRingRollout(
  e2e: E2E,
  dir: string,
  rings: readonly Ring[],
  succeeded: number,
): Promise<void> {
  await e2e.startAgents(
    "fleet",
    fleetFile(
      rings.map((r) =>
        clusters(`${r.name}-`, r.count, { ring: r.name }, slowUpgrades),
      ),
    ),
  );
  await e2e.connected(rings.reduce((sum, r) => sum + r.count, 0));
  await createStrategy(
    e2e,
    dir,
    "rings",
    rings.map((r) => ({
      name: r.name,
      memberSelector: { byLabel: `ring=${r.name}` },
      ...(r.maxConcurrency === undefined
        ? {}
        : { maxConcurrency: r.maxConcurrency }),
    })),
  );
  await startUpgrade(e2e, "up", "rings");
  await watchRun(
    e2e,
    "up",
    (run) =>
      namesIn(run, "Succeeded").length >= succeeded &&
      namesIn(run, "Running").length >= 1,
    {
      message: `${String(succeeded)} members Succeeded and 1 Running`,
    },
  );
}
