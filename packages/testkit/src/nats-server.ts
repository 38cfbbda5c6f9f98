import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { constants } from "node:fs";
import {
  access,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { FlotillaError } from "@flotilla/core";
import { waitFor } from "./wait-for.js";

/** Options of {@link startNatsServer}. */
export interface StartNatsServerOptions {
  /** Aborts a start (or restart) that is still waiting for the server to become ready. */
  signal?: AbortSignal;
  /** The executable; default `nats-server` from PATH, else from /usr/sbin (Debian's place). */
  binary?: string;
  /** How long a (re)start may take until `/healthz` answers 200; default 15000 ms. */
  startTimeoutMs?: number;
  /** How long a SIGTERM may take before SIGKILL; default 5000 ms. */
  stopTimeoutMs?: number;
  /** Extra command-line arguments, appended after the testkit's own. */
  args?: readonly string[];
  /**
   * Server configuration (nats-server's config file syntax), e.g. an operator-mode fragment with
   * `operator`, `system_account` and `resolver_preload`; written to a file passed with `-c`. The
   * testkit's command-line flags (JetStream, address, port, store directory) win over it.
   */
  config?: string;
}

/** A nats-server with JetStream on 127.0.0.1, in its own temporary directory. */
export interface NatsServer extends AsyncDisposable {
  /** Client URL, `nats://127.0.0.1:<port>`; stable across restarts. */
  readonly url: string;
  readonly port: number;
  /** JetStream's store directory; kept across restarts, removed by `stop()`. */
  readonly storeDir: string;
  /** Monitoring URL of the running process (a new port on every restart). */
  readonly monitorUrl: string;
  /** Process id of the running server, `undefined` while halted. */
  readonly pid: number | undefined;
  /** Stops the process (SIGTERM, then SIGKILL) but keeps the port and the JetStream data. */
  halt(): Promise<void>;
  /** Kills the process at once (SIGKILL, a crash); keeps the port and the JetStream data. */
  kill(): Promise<void>;
  /**
   * Halts if running, then starts again on the same port with the same store directory; with
   * `config`, with that configuration from now on (e.g. a new operator setup).
   */
  restart(options?: { signal?: AbortSignal; config?: string }): Promise<void>;
  /** Halts and removes the temporary directory. Idempotent. */
  stop(): Promise<void>;
  /** The last lines the server logged, for diagnosing a failure. */
  logs(): string;
}

const LOG_LINES_KEPT = 200;
// Debian installs nats-server in /usr/sbin, which is not on a normal user's PATH.
const SBIN_DIRS = ["/usr/local/sbin", "/usr/sbin", "/sbin"];
const MISSING_BINARY_HELP =
  "install it with `apt-get install -y nats-server` (Debian/Ubuntu) or put a nats-server 2.9+ " +
  "binary on PATH";

// Servers still running when the test process exits are killed, so a crashed test run leaves no
// orphaned nats-server behind.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  live.add(child);
  child.once("exit", () => live.delete(child));
}

/**
 * Starts `nats-server -js` on a random free port of 127.0.0.1 (`-p -1`, read back from its ports
 * file, so no other process can take the port in between) with a store directory in a new
 * temporary directory, and resolves once `/healthz` reports the server and JetStream ready.
 * Use with `await using`.
 */
export async function startNatsServer(
  options: StartNatsServerOptions = {},
): Promise<NatsServer> {
  const binary = options.binary ?? (await findNatsServer());
  const dir = await mkdtemp(join(tmpdir(), "flotilla-nats-"));
  const server = new NatsServerProcess(dir, binary, options);
  try {
    await mkdir(server.storeDir);
    await mkdir(server.portsDir);
    if (options.config !== undefined) {
      await writeFile(server.configFile, options.config, { mode: 0o600 });
    }
    await server.restart(options.signal ? { signal: options.signal } : {});
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

class NatsServerProcess implements NatsServer {
  readonly storeDir: string;
  readonly portsDir: string;
  readonly configFile: string;
  #port: number | undefined;
  #monitorUrl = "";
  #child: ChildProcess | undefined;
  #logLines: string[] = [];
  #stopped = false;
  #config: string | undefined;

  constructor(
    private readonly dir: string,
    private readonly binary: string,
    private readonly options: StartNatsServerOptions,
  ) {
    this.storeDir = join(dir, "store");
    this.portsDir = join(dir, "ports");
    this.configFile = join(dir, "nats-server.conf");
    this.#config = options.config;
  }

  get port(): number {
    if (this.#port === undefined) throw new Error("nats-server never started");
    return this.#port;
  }
  get url(): string {
    return `nats://127.0.0.1:${String(this.port)}`;
  }
  get monitorUrl(): string {
    return this.#monitorUrl;
  }
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  logs(): string {
    return this.#logLines.join("\n");
  }

  async restart(
    options: { signal?: AbortSignal; config?: string } = {},
  ): Promise<void> {
    if (this.#stopped) {
      throw new FlotillaError(
        "failed_precondition",
        "Cannot restart nats-server: it was stopped and its directory removed",
      );
    }
    await this.halt();
    if (options.config !== undefined) {
      this.#config = options.config;
      await writeFile(this.configFile, options.config, { mode: 0o600 });
    }
    const binary = this.binary;
    const args = [
      ...(this.#config === undefined ? [] : ["-c", this.configFile]),
      "-js",
      "-a",
      "127.0.0.1",
      "-p",
      this.#port === undefined ? "-1" : String(this.#port),
      "-m",
      "-1",
      "-sd",
      this.storeDir,
      "--ports_file_dir",
      this.portsDir,
      ...(this.options.args ?? []),
    ];
    const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    track(child);
    child.stdout?.on("data", (chunk: Buffer) => {
      this.#log(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.#log(chunk);
    });

    // The start fails fast if the process cannot be spawned or exits before it is ready.
    const died = new AbortController();
    child.once("error", (error: NodeJS.ErrnoException) => {
      const message =
        error.code === "ENOENT"
          ? `Cannot start nats-server: "${binary}" was not found; ${MISSING_BINARY_HELP}`
          : `Cannot start nats-server "${binary}": ${error.message}`;
      died.abort(
        new FlotillaError("failed_precondition", message, { cause: error }),
      );
    });
    child.once("exit", (code, signal) => {
      died.abort(
        new FlotillaError(
          "unavailable",
          `Cannot start nats-server: it exited (${signal ?? `code ${String(code)}`}) before it was ready; log:\n${this.logs()}`,
        ),
      );
    });
    const signals = [died.signal, options.signal ?? this.options.signal];
    try {
      const ports = await waitFor(() => this.#readPortsFile(child.pid), {
        timeoutMs: this.options.startTimeoutMs ?? 15_000,
        signal: AbortSignal.any(signals.filter((s) => s !== undefined)),
        message: `nats-server (pid ${String(child.pid)}) to become ready`,
      });
      this.#port = ports.port;
      this.#monitorUrl = ports.monitorUrl;
      await waitFor(() => isHealthy(ports.monitorUrl), {
        timeoutMs: this.options.startTimeoutMs ?? 15_000,
        signal: AbortSignal.any(signals.filter((s) => s !== undefined)),
        message: `nats-server ${ports.monitorUrl}/healthz to answer 200`,
      });
    } catch (error) {
      await this.halt();
      throw error;
    }
  }

  async halt(): Promise<void> {
    await this.#end("SIGTERM");
  }

  async kill(): Promise<void> {
    await this.#end("SIGKILL");
  }

  /** Sends `signal` to the running process and waits for it to exit (SIGKILL after the timeout). */
  async #end(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    this.#child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill(signal);
    const timeoutMs = this.options.stopTimeoutMs ?? 5_000;
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    await this.halt();
    this.#stopped = true;
    await rm(this.dir, { recursive: true, force: true });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  #log(chunk: Buffer): void {
    this.#logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    if (this.#logLines.length > LOG_LINES_KEPT) {
      this.#logLines.splice(0, this.#logLines.length - LOG_LINES_KEPT);
    }
  }

  async #readPortsFile(
    pid: number | undefined,
  ): Promise<{ port: number; monitorUrl: string } | undefined> {
    if (pid === undefined) return undefined;
    // nats-server writes `<executable>_<pid>.ports` once its listeners are up.
    const name = (await readdir(this.portsDir)).find((f) =>
      f.endsWith(`_${String(pid)}.ports`),
    );
    if (name === undefined) return undefined;
    const ports = JSON.parse(
      await readFile(join(this.portsDir, name), "utf8"),
    ) as { nats?: string[]; monitoring?: string[] };
    const client = ports.nats?.[0];
    const monitorUrl = ports.monitoring?.[0];
    if (client === undefined || monitorUrl === undefined) return undefined;
    return { port: Number(new URL(client).port), monitorUrl };
  }
}

/** The first executable `nats-server` on PATH or in an sbin directory. */
async function findNatsServer(): Promise<string> {
  const path = (process.env["PATH"] ?? "").split(delimiter).filter(Boolean);
  for (const dir of [...path, ...SBIN_DIRS]) {
    const candidate = join(dir, "nats-server");
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new FlotillaError(
    "failed_precondition",
    `Cannot start nats-server: it is not on PATH nor in ${SBIN_DIRS.join(", ")}; ${MISSING_BINARY_HELP}`,
  );
}

async function isHealthy(monitorUrl: string): Promise<boolean> {
  const response = await fetch(`${monitorUrl}/healthz`, {
    signal: AbortSignal.timeout(1_000),
  });
  await response.body?.cancel();
  return response.ok;
}
