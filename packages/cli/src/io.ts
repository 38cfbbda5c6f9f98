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
  /** Whether standard output is a terminal: enables colours and the terminal width. */
  readonly isTTY: boolean;
  /** The terminal width in columns when standard output is a terminal. */
  readonly columns?: number;
  /** The environment, read once by the entry (NO_COLOR). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Exit codes: success, unexpected error, bad input or usage. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

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
