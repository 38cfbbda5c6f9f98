/**
 * The hub's logging: one pino root logger per process writing JSON lines
 * to stdout, created by main.ts and injected; components take a child named after themselves
 * ({@link componentLogger}) and add per-cluster or per-run children with the fixed camelCase keys
 * (`clusterName`, `runName`, `generation`, `durationMs`, errors under `err`). Messages are
 * constant; the variable parts go in the fields:
 *
 *     const log = componentLogger(root, "scheduler");
 *     log.info({ run: runName, durationMs }, "Pass finished");
 */
import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

/** The levels `--log-level` accepts, most verbose first. */
export const LOG_LEVELS = [
  "trace",
  "debug",
  "info",
  "warn",
  "error",
  "fatal",
] as const;

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Field paths whose values never reach a log line: secrets are redacted.
 * Bootstrap tokens and credentials may travel in requests and metadata that a component logs whole.
 */
export const REDACTED_PATHS: readonly string[] = [
  "token",
  "*.token",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "privateKey",
  "*.privateKey",
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Where JSON lines go; default stdout. Tests pass a stream that collects them. */
  readonly destination?: DestinationStream;
  /** The `name` field of every line; default `flotilla-hub`. */
  readonly name?: string;
}

/** The process's root logger: JSON lines at `level` and above, epoch-millisecond `time`. */
export function createLogger(
  level: LogLevel,
  options: LoggerOptions = {},
): Logger {
  return pino(
    {
      name: options.name ?? "flotilla-hub",
      level,
      redact: { paths: [...REDACTED_PATHS], censor: "[redacted]" },
      // `err` holds errors (pino's default serializer, with `cause`s).
      serializers: { err: pino.stdSerializers.errWithCause },
    },
    // Synchronous writes to stdout: nothing is lost when the process exits.
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** A component's logger: every line carries `component` (e.g. `audit-log`, `scheduler`). */
export function componentLogger(root: Logger, component: string): Logger {
  return root.child({ component });
}
