import { formatProblem, type Problem } from "./result.js";

/**
 * The closed set of error codes. Each maps one-to-one to a gRPC status code in the protocol package.
 */
export const FLOTILLA_ERROR_CODES = [
  "invalid_argument",
  "not_found",
  "already_exists",
  "failed_precondition",
  "permission_denied",
  "unauthenticated",
  "unavailable",
  "deadline_exceeded",
  "resource_exhausted",
  "internal",
] as const;

/** One of {@link FLOTILLA_ERROR_CODES}. */
export type FlotillaErrorCode = (typeof FLOTILLA_ERROR_CODES)[number];

/** The one error type flotilla throws; `problems` lists every field-level issue for invalid input. */
export class FlotillaError extends Error {
  override readonly name = "FlotillaError";
  readonly code: FlotillaErrorCode;
  readonly problems: readonly Problem[];

  constructor(
    code: FlotillaErrorCode,
    message: string,
    options: { cause?: unknown; problems?: readonly Problem[] } = {},
  ) {
    super(
      message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.problems = options.problems ?? [];
  }

  /** Builds an `invalid_argument` error from a list of problems. */
  static invalid(what: string, problems: readonly Problem[]): FlotillaError {
    const detail = problems.map(formatProblem).join("; ");
    return new FlotillaError("invalid_argument", `Invalid ${what}: ${detail}`, {
      problems,
    });
  }

  /** Normalizes anything caught into a FlotillaError (unknown errors become `internal`). */
  static from(error: unknown): FlotillaError {
    if (error instanceof FlotillaError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new FlotillaError("internal", message, { cause: error });
  }
}
