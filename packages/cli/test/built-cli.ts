/**
 * Runs the built `flotilla` binary (dist/main.js) as a process, with only PATH in its environment,
 * and resolves with its exit code and output.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { compact } from "@flotilla/core";

const main = fileURLToPath(new URL("../dist/main.js", import.meta.url));

/** What a run of the binary left behind. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node dist/main.js ARGS…` in `cwd` (default: the current directory). */
export function runBuiltCli(
  args: readonly string[],
  options: { readonly cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      {
        ...compact({ cwd: options.cwd }),
        env: { PATH: process.env["PATH"] ?? "" },
      },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : Number(error.code),
          stdout,
          stderr,
        });
      },
    );
  });
}
