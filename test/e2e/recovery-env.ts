/**
 * The set-up every recovery test shares: a temporary directory, a fresh nats-server and hub per
 * test (fleet.ts) with an intent log listening from the start, processes frozen with SIGSTOP
 * continued before clean-up, and everything stopped after the test whatever happened.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { startE2E, type E2E, type E2EOptions } from "./fleet.js";
import { watchIntents, type IntentLog } from "./intent-log.js";

/** Each test starts its own processes; on a 2-core machine one takes 12 to 25 s. */
export const TEST_TIMEOUT_MS = 60_000;

/** Simulated upgrades of 1 to 2 s, so that a run of a dozen members lasts about 10 s. */
export const slowUpgrades = {
  upgradeDuration: { uniform: { minSeconds: 1, maxSeconds: 2 } },
} as const;

export interface RecoveryEnv {
  /** The test's temporary directory (strategy and bundle files). */
  readonly work: string;
  /** Starts nats-server and the hub, and subscribes the intent log before anything is published. */
  start(options?: E2EOptions): Promise<{ env: E2E; log: IntentLog }>;
  /** SIGSTOPs a process; clean-up continues it if the test does not. */
  freeze(pid: number): void;
  /** SIGCONTs a process frozen with {@link freeze}. */
  thaw(pid: number): void;
}

/** Registers the per-test set-up and clean-up hooks; call once at the top of a test file. */
export function useRecoveryEnv(): RecoveryEnv {
  let work = "";
  let e2e: E2E | undefined;
  let log: IntentLog | undefined;
  const frozen = new Set<number>();

  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), "flotilla-recovery-"));
  });

  afterEach(async () => {
    for (const pid of frozen) process.kill(pid, "SIGCONT");
    frozen.clear();
    await log?.close();
    await e2e?.stop();
    log = undefined;
    e2e = undefined;
    await rm(work, { recursive: true, force: true });
  });

  return {
    get work() {
      return work;
    },
    async start(options) {
      e2e = await startE2E(options);
      log = await watchIntents(e2e.nats.url);
      return { env: e2e, log };
    },
    freeze(pid) {
      process.kill(pid, "SIGSTOP");
      frozen.add(pid);
    },
    thaw(pid) {
      process.kill(pid, "SIGCONT");
      frozen.delete(pid);
    },
  };
}
