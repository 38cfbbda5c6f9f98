/**
 * What a command may touch of the outside world. The process entry builds the real one; tests pass
 * a fake, so every command is testable without spawning a process.
 */
export interface CliIo {
  /** Writes text to standard output as given (callers add newlines). */
  readonly stdout: (text: string) => void;
  /** Writes text to standard error as given (callers add newlines). */
  readonly stderr: (text: string) => void;
  /** Reads a UTF-8 file; rejects with the Node.js error (its `code` names the cause). */
  readonly readFile: (path: string) => Promise<string>;
  /** Reads a file's bytes (manifests are sent as they are); rejects like {@link readFile}. */
  readonly readBytes: (path: string) => Promise<Uint8Array>;
  /**
   * Writes a file atomically (a temporary file beside it, renamed over it) with permission bits
   * `mode` (e.g. 0o600 for secrets), creating missing parent directories (0o700); rejects with the
   * Node.js error.
   */
  readonly writeFile: (
    path: string,
    data: string | Uint8Array,
    mode: number,
  ) => Promise<void>;
  /** Reads standard input to its end (secrets given as `-`); absent where there is none. */
  readonly readStdin?: () => Promise<string>;
  /** Lists a directory (not recursively); rejects with the Node.js error (ENOENT, ENOTDIR). */
  readonly readDir: (path: string) => Promise<readonly DirEntry[]>;
  /** Whether standard output is a terminal: enables colours and the terminal width. */
  readonly isTTY: boolean;
  /** The terminal width in columns when standard output is a terminal. */
  readonly columns?: number;
  /** The environment, read once by the entry (NO_COLOR, FLOTILLA_HUB, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The wall clock in epoch milliseconds ("5m ago", `--since 1h`). */
  readonly now: () => number;
  /** The operating-system user, the default `--actor`; undefined when it cannot be told. */
  readonly userName?: string;
}

/** One entry of a directory listing. */
export interface DirEntry {
  readonly name: string;
  readonly kind: "file" | "directory" | "other";
}

/**
 * Exit codes: success; the operation failed or was refused (also unexpected errors); bad input or
 * usage (local validation or the hub's INVALID_ARGUMENT); the hub could not be reached.
 */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;
export const EXIT_UNREACHABLE = 3;

/** Column width used when standard output is not a terminal. */
export const DEFAULT_WIDTH = 80;

/** The width to lay out human output in. */
export function outputWidth(io: CliIo): number {
  if (!io.isTTY) return DEFAULT_WIDTH;
  const columns = io.columns ?? DEFAULT_WIDTH;
  // Very narrow terminals still get a usable layout; lines then simply overflow.
  return Math.max(columns, 40);
}

/** Whether to colour output: only on a terminal, and never when NO_COLOR is set (non-empty). */
export function useColor(io: CliIo): boolean {
  const noColor = io.env["NO_COLOR"];
  return io.isTTY && (noColor === undefined || noColor === "");
}
