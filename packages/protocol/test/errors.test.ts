import { describe, expect, it } from "vitest";
import { Metadata, status } from "@grpc/grpc-js";
import { FlotillaError, type FlotillaErrorCode } from "@flotilla/core";
import {
  codeOfGrpcStatus,
  fromGrpcError,
  loadProtocol,
  streamErrorFromWire,
  streamErrorToWire,
  toGrpcStatus,
} from "@flotilla/protocol";
import {
  grpcStatusOf,
  MAX_PROBLEMS_BYTES,
  MAX_WIRE_PROBLEMS,
  PROBLEMS_METADATA_KEY,
  problemsFromWire,
  problemsToWire,
} from "@flotilla/protocol/testing";

const PAIRS: [FlotillaErrorCode, status][] = [
  ["invalid_argument", status.INVALID_ARGUMENT],
  ["not_found", status.NOT_FOUND],
  ["already_exists", status.ALREADY_EXISTS],
  ["failed_precondition", status.FAILED_PRECONDITION],
  ["permission_denied", status.PERMISSION_DENIED],
  ["unauthenticated", status.UNAUTHENTICATED],
  ["unavailable", status.UNAVAILABLE],
  ["deadline_exceeded", status.DEADLINE_EXCEEDED],
  ["resource_exhausted", status.RESOURCE_EXHAUSTED],
  ["internal", status.INTERNAL],
];

/** What a grpc-js client sees when the server answers `sent`. */
function asServiceError(sent: ReturnType<typeof toGrpcStatus>): unknown {
  return Object.assign(new Error(`${String(sent.code)} ${sent.details}`), sent);
}

describe("error mapping", () => {
  it.each(PAIRS)("maps %s to gRPC status %i and back", (code, grpcStatus) => {
    expect(grpcStatusOf(code)).toBe(grpcStatus);
    expect(codeOfGrpcStatus(grpcStatus)).toBe(code);
    const error = new FlotillaError(code, `Cannot do it: "${code}"`);
    const sent = toGrpcStatus(error);
    expect(sent.code).toBe(grpcStatus);
    expect(sent.details).toBe(`Cannot do it: "${code}"`);
    const back = fromGrpcError(asServiceError(sent));
    expect(back).toBeInstanceOf(FlotillaError);
    expect(back.code).toBe(code);
    expect(back.message).toBe(`Cannot do it: "${code}"`);
    expect(back.problems).toEqual([]);
  });

  it("is one-to-one over the ten codes", () => {
    expect(new Set(PAIRS.map(([, s]) => s)).size).toBe(10);
  });

  it("carries problems (paths, messages, values) in the trailer", () => {
    const problems = [
      { path: "stages[0].name", message: "must not be empty", value: "" },
      {
        path: "stages[1].maxConcurrency",
        message: "must be positive",
        value: 0,
      },
      { path: "stages[2]", message: "unknown field", value: { a: [1, "ü"] } },
      { path: "", message: "no value here" },
    ];
    const sent = toGrpcStatus(FlotillaError.invalid("strategy", problems));
    expect(sent.metadata.get(PROBLEMS_METADATA_KEY)).toHaveLength(1);
    const back = fromGrpcError(asServiceError(sent));
    expect(back.code).toBe("invalid_argument");
    expect(back.problems).toEqual(problems);
  });

  it("never sends a cause, and sends only 'Internal error' for an error that is not a FlotillaError", () => {
    const secret = new Error("password=hunter2 at /etc/flotilla");
    const wrapped = new FlotillaError("unavailable", "Cannot reach the store", {
      cause: secret,
    });
    const sent = toGrpcStatus(wrapped);
    expect(JSON.stringify(sent)).not.toContain("hunter2");
    expect(sent.metadata.toJSON()).toEqual({});
    expect(toGrpcStatus(secret)).toMatchObject({
      code: status.INTERNAL,
      details: "Internal error",
    });
  });

  it("bounds the problems it sends and says how many were left out", () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({
      path: `clusters[${String(i)}].labels`,
      message: "x".repeat(300),
      value: "v".repeat(5000),
    }));
    const sent = toGrpcStatus(FlotillaError.invalid("clusters", many));
    const [raw] = sent.metadata.get(PROBLEMS_METADATA_KEY);
    expect(Buffer.isBuffer(raw) ? raw.length : Infinity).toBeLessThanOrEqual(
      MAX_PROBLEMS_BYTES,
    );
    expect(sent.details.length).toBeLessThanOrEqual(2048);
    const back = fromGrpcError(asServiceError(sent)).problems;
    expect(back.length).toBeLessThanOrEqual(MAX_WIRE_PROBLEMS + 1);
    expect(back.at(-1)).toEqual({
      path: "",
      message: `${String(1000 - back.length + 1)} more problems not shown`,
    });
    // Long values travel as their shortened display form.
    expect(String(back[0]?.value).length).toBeLessThanOrEqual(80);
  });

  it("maps codes flotilla never sends by what the caller can do", () => {
    expect(codeOfGrpcStatus(status.CANCELLED)).toBe("unavailable");
    expect(codeOfGrpcStatus(status.ABORTED)).toBe("failed_precondition");
    expect(codeOfGrpcStatus(status.UNIMPLEMENTED)).toBe("internal");
    expect(codeOfGrpcStatus(99)).toBe("internal");
  });

  it("keeps the grpc error as the local cause and survives malformed trailers", () => {
    const metadata = new Metadata();
    metadata.set(PROBLEMS_METADATA_KEY, Buffer.from("{not json"));
    const error = asServiceError({
      code: status.NOT_FOUND,
      details: 'Cannot find run "x"',
      metadata,
    });
    const back = fromGrpcError(error);
    expect(back).toMatchObject({ code: "not_found", problems: [] });
    expect(back.cause).toBe(error);
    expect(fromGrpcError(new TypeError("boom")).code).toBe("internal");
    const same = new FlotillaError("not_found", "x");
    expect(fromGrpcError(same)).toBe(same);
  });

  it("drops malformed problem entries rather than failing", () => {
    expect(
      problemsFromWire([
        { path: "a", message: "m", valueJson: "[1" },
        { path: 1, message: "m" },
        null,
        { path: "b", message: "n" },
      ]),
    ).toEqual([
      { path: "a", message: "m", value: "[1" },
      { path: "b", message: "n" },
    ]);
    expect(problemsFromWire("nope")).toEqual([]);
    expect(
      problemsToWire([{ path: "p", message: "m", value: undefined }]),
    ).toEqual([{ path: "p", message: "m" }]);
  });

  it("carries a StreamError through protobuf as the same FlotillaError", () => {
    const error = new FlotillaError(
      "permission_denied",
      'Cannot report for cluster "b": the certificate names "a"',
      {
        problems: [
          { path: "hello.clusterName", message: "must be a", value: "b" },
        ],
      },
    );
    const connect = loadProtocol().agentService.Connect;
    const decoded = connect.responseDeserialize(
      connect.responseSerialize({ error: streamErrorToWire(error) }),
    );
    expect(decoded.body).toBe("error");
    const back = streamErrorFromWire(
      decoded.error ?? {
        code: "ERROR_CODE_UNSPECIFIED",
        message: "",
        problems: [],
      },
    );
    expect(back).toMatchObject({
      code: "permission_denied",
      message: error.message,
      problems: error.problems,
    });
    expect(streamErrorToWire(new Error("secret"))).toEqual({
      code: "ERROR_CODE_INTERNAL",
      message: "Internal error",
      problems: [],
    });
  });
});
