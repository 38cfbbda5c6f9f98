/**
 * Runs the CLI in process (`run` from main.ts) and returns what it printed: over in-memory files
 * ({@link runCli}) or over the real file system ({@link runCliOnDisk}). For the built binary as a
 * process, see built-cli.ts.
 */
import { run } from "../../src/main.js";
import { createProcessIo } from "../../src/process-io.js";
import { memoryIo, type MemoryIo } from "../fixtures.js";

/** What one CLI run printed and returned. */
export interface CliResult {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs the CLI over `io` (default: no files, see {@link memoryIo}). */
export async function runCli(
  argv: readonly string[],
  io: MemoryIo = memoryIo(),
): Promise<CliResult> {
  const code = await run(argv, io);
  return { code, out: io.out(), err: io.err() };
}

/** Runs the CLI over the real file system with `env` as its environment, not a terminal. */
export async function runCliOnDisk(
  argv: readonly string[],
  options: {
    readonly env?: Record<string, string>;
    /** The clock (default: the real one). */
    readonly nowMs?: number;
  } = {},
): Promise<CliResult> {
  let out = "";
  let err = "";
  const io = createProcessIo(
    {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      isTTY: false,
    },
    options.env ?? {},
  );
  const { nowMs } = options;
  const code = await run(
    argv,
    nowMs === undefined ? io : { ...io, now: () => nowMs },
  );
  return { code, out, err };
}
