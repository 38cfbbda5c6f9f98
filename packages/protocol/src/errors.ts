/**
 * FlotillaError ↔ gRPC status. The ten codes map one-to-one to the gRPC
 * status of the same name. Field problems travel as JSON in the `flotilla-problems-bin` trailer
 * (binary metadata, so any UTF-8 is safe), bounded by MAX_WIRE_PROBLEMS and MAX_PROBLEMS_BYTES;
 * the message travels as the status details. Causes never go over the wire: they stay on the
 * side that logged them, and an error that is not a FlotillaError goes out as a bare `internal`.
 */
import {
  FlotillaError,
  showValue,
  type FlotillaErrorCode,
  type Problem,
} from "@flotilla/core";
import { Metadata, status, type StatusObject } from "@grpc/grpc-js";
import type * as wire from "./generated/index.js";
import { enumCodec } from "./codecs/enum-codec.js";
import {
  MAX_ERROR_DETAILS_LENGTH,
  MAX_PROBLEM_VALUE_LENGTH,
  MAX_PROBLEMS_BYTES,
  MAX_WIRE_PROBLEMS,
} from "./limits.js";

/** The trailer that carries an error's problems. */
export const PROBLEMS_METADATA_KEY = "flotilla-problems-bin";

const GRPC_STATUS: Readonly<Record<FlotillaErrorCode, status>> = {
  invalid_argument: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  already_exists: status.ALREADY_EXISTS,
  failed_precondition: status.FAILED_PRECONDITION,
  permission_denied: status.PERMISSION_DENIED,
  unauthenticated: status.UNAUTHENTICATED,
  unavailable: status.UNAVAILABLE,
  deadline_exceeded: status.DEADLINE_EXCEEDED,
  resource_exhausted: status.RESOURCE_EXHAUSTED,
  internal: status.INTERNAL,
};

/**
 * Codes flotilla never sends, as grpc-js or a foreign server may produce them: mapped by what the
 * caller can do about them.
 */
const FOREIGN_STATUS: ReadonlyMap<number, FlotillaErrorCode> = new Map([
  // The call did not complete (the caller who cancelled knows it did).
  [status.CANCELLED, "unavailable"],
  [status.OUT_OF_RANGE, "invalid_argument"],
  [status.ABORTED, "failed_precondition"],
  [status.UNKNOWN, "internal"],
  [status.UNIMPLEMENTED, "internal"],
  [status.DATA_LOSS, "internal"],
]);

const CODE_OF_STATUS: ReadonlyMap<number, FlotillaErrorCode> = new Map(
  (Object.entries(GRPC_STATUS) as [FlotillaErrorCode, status][]).map(
    ([code, grpcStatus]) => [grpcStatus, code],
  ),
);

/** Error codes ↔ `ERROR_CODE_*` (StreamError, audit events). */
export const ERROR_CODE = enumCodec<FlotillaErrorCode, wire.ErrorCode__Output>({
  invalid_argument: "ERROR_CODE_INVALID_ARGUMENT",
  not_found: "ERROR_CODE_NOT_FOUND",
  already_exists: "ERROR_CODE_ALREADY_EXISTS",
  failed_precondition: "ERROR_CODE_FAILED_PRECONDITION",
  permission_denied: "ERROR_CODE_PERMISSION_DENIED",
  unauthenticated: "ERROR_CODE_UNAUTHENTICATED",
  unavailable: "ERROR_CODE_UNAVAILABLE",
  deadline_exceeded: "ERROR_CODE_DEADLINE_EXCEEDED",
  resource_exhausted: "ERROR_CODE_RESOURCE_EXHAUSTED",
  internal: "ERROR_CODE_INTERNAL",
});

/** The gRPC status of a FlotillaError code. */
export function grpcStatusOf(code: FlotillaErrorCode): status {
  return GRPC_STATUS[code];
}

/** The FlotillaError code of a gRPC status (codes flotilla never sends map by meaning). */
export function codeOfGrpcStatus(grpcStatus: number): FlotillaErrorCode {
  return (
    CODE_OF_STATUS.get(grpcStatus) ??
    FOREIGN_STATUS.get(grpcStatus) ??
    "internal"
  );
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function valueJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  // JSON.stringify gives undefined for functions and symbols: send the display form instead,
  // shortened (showValue leaves strings whole).
  if (json === undefined || json.length > MAX_PROBLEM_VALUE_LENGTH) {
    json = JSON.stringify(shorten(showValue(value), 80));
  }
  return json;
}

/**
 * Encodes problems, keeping the first ones that fit MAX_WIRE_PROBLEMS and MAX_PROBLEMS_BYTES; when
 * some are left out, a last problem with an empty path says how many.
 */
export function problemsToWire(problems: readonly Problem[]): wire.Problem[] {
  const out: wire.Problem[] = [];
  let bytes = 2;
  for (const problem of problems) {
    const encoded: wire.Problem = {
      path: shorten(problem.path, 512),
      message: shorten(problem.message, 1024),
    };
    const json = valueJson(problem.value);
    if (json !== undefined) encoded.valueJson = json;
    const size = Buffer.byteLength(JSON.stringify(encoded)) + 1;
    if (
      out.length === MAX_WIRE_PROBLEMS ||
      bytes + size > MAX_PROBLEMS_BYTES - 64
    )
      break;
    out.push(encoded);
    bytes += size;
  }
  const left = problems.length - out.length;
  if (left > 0) {
    out.push({ path: "", message: `${String(left)} more problems not shown` });
  }
  return out;
}

function isRecord(raw: unknown): raw is Record<string, unknown> {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw);
}

/** Decodes problems; malformed entries are dropped (an error report must never fail itself). */
export function problemsFromWire(raw: unknown): Problem[] {
  if (!Array.isArray(raw)) return [];
  const problems: Problem[] = [];
  for (const item of raw as unknown[]) {
    if (!isRecord(item)) continue;
    const { path, message } = item;
    const json = item["valueJson"];
    if (typeof path !== "string" || typeof message !== "string") continue;
    if (typeof json === "string") {
      let value: unknown;
      try {
        value = JSON.parse(json);
      } catch {
        value = json;
      }
      problems.push({ path, message, value });
    } else {
      problems.push({ path, message });
    }
  }
  return problems;
}

/** The status a server sends for `error`: `callback(toGrpcStatus(e))` or `call.destroy(...)`. */
export function toGrpcStatus(
  error: unknown,
): Pick<StatusObject, "code" | "details" | "metadata"> {
  const metadata = new Metadata();
  if (!(error instanceof FlotillaError)) {
    return { code: status.INTERNAL, details: "Internal error", metadata };
  }
  if (error.problems.length > 0) {
    const json = JSON.stringify(problemsToWire(error.problems));
    metadata.set(PROBLEMS_METADATA_KEY, Buffer.from(json, "utf8"));
  }
  return {
    code: GRPC_STATUS[error.code],
    details: shorten(error.message, MAX_ERROR_DETAILS_LENGTH),
    metadata,
  };
}

function problemsOfMetadata(metadata: unknown): Problem[] {
  if (!(metadata instanceof Metadata)) return [];
  const [value] = metadata.get(PROBLEMS_METADATA_KEY);
  if (value === undefined) return [];
  try {
    const text = typeof value === "string" ? value : value.toString("utf8");
    return problemsFromWire(JSON.parse(text));
  } catch {
    return [];
  }
}

/**
 * The FlotillaError for an error a client call failed with (a grpc-js ServiceError), with its
 * problems. A FlotillaError passes through; anything else becomes `internal`.
 */
export function fromGrpcError(error: unknown): FlotillaError {
  if (error instanceof FlotillaError) return error;
  if (!isRecord(error) || typeof error["code"] !== "number") {
    return FlotillaError.from(error);
  }
  const code = codeOfGrpcStatus(error["code"]);
  const details = error["details"];
  const message =
    typeof details === "string" && details !== ""
      ? details
      : error instanceof Error
        ? error.message
        : `gRPC status ${String(error["code"])}`;
  return new FlotillaError(code, message, {
    cause: error,
    problems: problemsOfMetadata(error["metadata"]),
  });
}

/** Encodes an error as the StreamError a hub sends before closing an agent's stream. */
export function streamErrorToWire(error: unknown): wire.StreamError {
  if (!(error instanceof FlotillaError)) {
    return {
      code: "ERROR_CODE_INTERNAL",
      message: "Internal error",
      problems: [],
    };
  }
  return {
    code: ERROR_CODE.toWire(error.code),
    message: shorten(error.message, MAX_ERROR_DETAILS_LENGTH),
    problems: problemsToWire(error.problems),
  };
}

/** Decodes a StreamError into a FlotillaError (an unknown code reads as `internal`). */
export function streamErrorFromWire(
  raw: wire.StreamError__Output,
): FlotillaError {
  return new FlotillaError(
    ERROR_CODE.fromWire(raw.code) ?? "internal",
    raw.message,
    { problems: problemsFromWire(raw.problems) },
  );
}
