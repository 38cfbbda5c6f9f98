/**
 * Real processes for end-to-end tests (hub, agents, CLI): spawned with their output captured
 * line by line, waited on by content (never by time), stopped with SIGTERM or killed with SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait-for.js";

/** The repository's root directory. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export interface ProcessOptions {
  readonly command?: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** A name for messages. */
  readonly name: string;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface TestProcess extends AsyncDisposable {
  readonly name: string;
  readonly pid: number;
  /** Every stdout and stderr line so far. */
  readonly lines: readonly string[];
  /** Output since the process started, for failure messages. */
  output(): string;
  /** Resolves with the first line (from the start) matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** Sends a signal (SIGKILL: no clean-up at all). */
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  stop(graceMs?: number): Promise<Exit>;
}

/** Spawns `node ARGS…` (or `command`), capturing its output. */
export function startProcess(options: ProcessOptions): TestProcess {
  const child: ChildProcess = spawn(
    options.command ?? process.execPath,
    [...options.args],
    {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null): void => {
    let rest = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      rest += chunk;
      const parts = rest.split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts);
    });
    stream?.on("end", () => {
      if (rest !== "") lines.push(rest);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  let exit: Exit | undefined;
  const exited = (
    once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>
  ).then(([code, signal]) => {
    exit = { code, signal };
    return exit;
  });
  const output = (): string => lines.slice(-200).join("\n");
  const proc: TestProcess = {
    name: options.name,
    pid: child.pid ?? -1,
    lines,
    output,
    exited,
    async waitForLine(pattern, timeoutMs = 20_000) {
      try {
        return await waitFor(
          () => {
            const found = lines.find((l) => pattern.test(l));
            if (found !== undefined) return found;
            if (exit !== undefined) throw new Error("exited");
            return undefined;
          },
          { timeoutMs, message: `${options.name} to print ${String(pattern)}` },
        );
      } catch (error) {
        const status =
          exit === undefined
            ? "is still running"
            : `exited (${String(exit.code ?? exit.signal)})`;
        throw new Error(
          `${options.name} did not print ${String(pattern)} and ${status}:\n${output()}`,
          { cause: error },
        );
      }
    },
    kill(signal) {
      if (exit === undefined) child.kill(signal);
    },
    async stop(graceMs = 5_000) {
      if (exit !== undefined) return exit;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
    async [Symbol.asyncDispose]() {
      await proc.stop();
    },
  };
  return proc;
}

/** Runs a process to completion; resolves with its exit code and output. */
export async function runProcess(
  options: ProcessOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(options.command ?? process.execPath, [...options.args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}
