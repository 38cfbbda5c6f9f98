/**
 * The real hub process (`packages/hub/dist/main.js`) started on its own, for tests of how it
 * starts and stops: its exit (code, and how long it took) and the one-line messages it writes for
 * a person (`flotilla-hub: …`, as opposed to its JSON log lines).
 */
import {
  startProcess,
  waitFor,
  type Exit,
  type TestProcess,
} from "@flotilla/testkit";

export interface HubProcessOptions {
  /** The NATS server's URL. */
  readonly nats: string;
  /** gRPC address; default `127.0.0.1:0`. */
  readonly listen?: string;
  /** More flags (no `--listen`, `--nats`, `--log-level`). */
  readonly args?: readonly string[];
  /** Default `warn`. */
  readonly logLevel?: string;
}

/** Starts `flotilla-hub` in development mode without its HTTP server unless `args` say otherwise. */
export function startHubProcess(options: HubProcessOptions): TestProcess {
  const args = options.args ?? [];
  return startProcess({
    name: "hub",
    args: [
      "packages/hub/dist/main.js",
      "--listen",
      options.listen ?? "127.0.0.1:0",
      "--nats",
      options.nats,
      ...(args.includes("--http-listen") ? [] : ["--http-listen", "off"]),
      ...(args.some((a) => a.startsWith("--tls-"))
        ? []
        : ["--insecure-plaintext"]),
      "--log-level",
      options.logLevel ?? "warn",
      ...args,
    ],
  });
}

/** The exit of `proc` and how long after the call it came; fails after `timeoutMs`. */
export async function exitWithin(
  proc: TestProcess,
  timeoutMs: number,
): Promise<Exit & { afterMs: number }> {
  const started = performance.now();
  let exit: Exit | undefined;
  void proc.exited.then((e) => (exit = e));
  try {
    const done = await waitFor(() => exit, {
      timeoutMs,
      message: `${proc.name} to exit`,
    });
    return { ...done, afterMs: performance.now() - started };
  } catch (error) {
    throw new Error(
      `${proc.name} (pid ${String(proc.pid)}) did not exit within ${String(timeoutMs)} ms:\n${proc.output()}`,
      { cause: error },
    );
  }
}

/** The lines `proc` wrote for a person (`flotilla-hub: …`, not JSON log lines). */
export function messageLines(proc: TestProcess, program = "flotilla-hub") {
  return proc.lines.filter((l) => l.startsWith(`${program}: `));
}

/**
 * How long a stopped hub may take before it is killed: its default `--shutdown-timeout` (10 s,
 * after which it abandons what is left and exits 0 anyway) with room for forcing and exiting.
 * A loaded machine has been seen to need more than the testkit's 5 s default.
 */
export const HUB_STOP_GRACE_MS = 15_000;

/** Sends the hub SIGTERM and resolves with its exit, killing it after {@link HUB_STOP_GRACE_MS}. */
export function stopHub(proc: TestProcess): Promise<Exit> {
  return proc.stop(HUB_STOP_GRACE_MS);
}
