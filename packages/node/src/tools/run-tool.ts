/**
 * Running an external tool (helm, kubectl) to completion: its standard output, or one problem that
 * says which tool failed and why (not installed, exit status with the end of its standard error,
 * timed out, too much output, aborted). The processes that render bundles use it; nothing here
 * knows what the tool does.
 */
import { spawn } from "node:child_process";
import { fail, ok, problem, type Result } from "@flotilla/core";

/** Options of {@link runTool}. */
export interface RunToolOptions {
  /** Working directory; default the process's. */
  readonly cwd?: string;
  /** Environment added to (and overriding) the process's own. */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to the tool's standard input, which is then closed. */
  readonly input?: string | Uint8Array;
  /** Killed (SIGKILL) after this long; default 60 s. */
  readonly timeoutMs?: number;
  /** Standard output beyond this fails the call and kills the tool; default 64 MiB. */
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
  /** How the configuration names the tool, for the "not found" message (`--helm`, `FLOTILLA_HELM`). */
  readonly configuredBy?: string;
}

/** What a tool that exited 0 printed. */
export interface ToolOutput {
  readonly stdout: string;
  readonly stderr: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 64 * 1024 * 1024;
/** Kept of standard error for the message: the end, where tools put the error. */
const STDERR_TAIL = 4096;

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= STDERR_TAIL
    ? trimmed
    : `…${trimmed.slice(trimmed.length - STDERR_TAIL)}`;
}

/**
 * Runs `command` with `args` (no shell) and waits for it. Fails with one problem whose message
 * starts with the command's name and first argument (`helm template: …`).
 */
export function runTool(
  command: string,
  args: readonly string[],
  options: RunToolOptions = {},
): Promise<Result<ToolOutput>> {
  const label = [command.split("/").pop() ?? command, args[0]]
    .filter((part) => part !== undefined)
    .join(" ");
  const failure = (why: string): Result<ToolOutput> =>
    fail([problem(`${label}: ${why}`)]);
  return new Promise((resolve) => {
    if (options.signal?.aborted === true) {
      resolve(failure("aborted"));
      return;
    }
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let stopped: string | undefined;
    const stop = (why: string): void => {
      stopped ??= why;
      child.kill("SIGKILL");
    };
    const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    child.stdout.on("data", (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > max) stop(`printed more than ${String(max)} bytes`);
      else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err.push(chunk);
    });
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timer = setTimeout(() => {
      stop(`did not finish within ${String(timeoutMs)} ms`);
    }, timeoutMs);
    const onAbort = (): void => {
      stop("aborted");
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const done = (result: Result<ToolOutput>): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(result);
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") {
        const how =
          options.configuredBy === undefined
            ? ""
            : `, or set ${options.configuredBy}`;
        done(
          failure(
            `${command} is not installed (not found${command.includes("/") ? "" : " on PATH"}); install it${how}`,
          ),
        );
      } else {
        done(failure(error.message));
      }
    });
    child.on("close", (code, signal) => {
      const stderr = Buffer.concat(err).toString("utf8");
      if (stopped !== undefined) done(failure(stopped));
      else if (code === 0) {
        done(ok({ stdout: Buffer.concat(out).toString("utf8"), stderr }));
      } else {
        const status =
          code === null
            ? `killed by ${String(signal)}`
            : `exit status ${String(code)}`;
        const said = tail(stderr);
        done(failure(said === "" ? status : `${said} (${status})`));
      }
    });
    child.stdin.on("error", () => {
      // The tool may exit before reading its input; its exit status says what went wrong.
    });
    child.stdin.end(options.input);
  });
}
