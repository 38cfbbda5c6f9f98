import { FlotillaError } from "@flotilla/core";
import {
  isNatsOutage,
  isStoreFull,
  isStreamNotFound,
  isWrongLastRevision,
  toNatsFlotillaError,
} from "@flotilla/node";
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { DrainingConnectionError, TimeoutError } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";

const apiError = (
  err_code: number,
  code = 400,
  description = "refused",
): JetStreamApiError => new JetStreamApiError({ code, err_code, description });

describe("isWrongLastRevision", () => {
  it("is true for both wrong-last-sequence answers only", () => {
    expect(
      isWrongLastRevision(apiError(JetStreamApiCodes.StreamWrongLastSequence)),
    ).toBe(true);
    expect(
      isWrongLastRevision(
        apiError(JetStreamApiCodes.StreamWrongLastSequenceUnknown),
      ),
    ).toBe(true);
    expect(
      isWrongLastRevision(apiError(JetStreamApiCodes.StreamNotFound, 404)),
    ).toBe(false);
    expect(isWrongLastRevision(new Error("wrong last sequence"))).toBe(false);
  });
});

describe("isStreamNotFound", () => {
  it("is true for JetStream's stream-not-found answer only", () => {
    expect(
      isStreamNotFound(apiError(JetStreamApiCodes.StreamNotFound, 404)),
    ).toBe(true);
    expect(isStreamNotFound(apiError(10071))).toBe(false);
    expect(isStreamNotFound(new Error("stream not found"))).toBe(false);
  });
});

describe("isNatsOutage", () => {
  it("recognises timeouts, draining connections and 503 answers, also when wrapped", () => {
    expect(isNatsOutage(new TimeoutError())).toBe(true);
    expect(isNatsOutage(new DrainingConnectionError())).toBe(true);
    expect(isNatsOutage(apiError(10008, 503))).toBe(true);
    expect(
      isNatsOutage(new Error("outer", { cause: new TimeoutError() })),
    ).toBe(true);
    expect(isNatsOutage(apiError(10071))).toBe(false);
    expect(isNatsOutage("timeout")).toBe(false);
  });
});

describe("isStoreFull", () => {
  it("recognises a full server, account or stream, also when wrapped", () => {
    expect(isStoreFull(apiError(10023, 503))).toBe(true);
    expect(isStoreFull(apiError(10002))).toBe(true);
    expect(isStoreFull(apiError(10047))).toBe(true);
    expect(isStoreFull(apiError(10077, 503, "maximum bytes exceeded"))).toBe(
      true,
    );
    expect(
      isStoreFull(new Error("outer", { cause: apiError(10023, 503) })),
    ).toBe(true);
    expect(isStoreFull(apiError(10077, 503, "stream store failed"))).toBe(
      false,
    );
    expect(isStoreFull(new TimeoutError())).toBe(false);
  });
});

describe("toNatsFlotillaError", () => {
  it("passes FlotillaErrors and the reason of an aborted signal through", () => {
    const flotilla = new FlotillaError("not_found", "gone");
    expect(toNatsFlotillaError(flotilla, "Cannot x", undefined)).toBe(flotilla);
    const reason = new Error("stopping");
    const signal = AbortSignal.abort(reason);
    expect(toNatsFlotillaError(reason, "Cannot x", signal)).toBe(reason);
  });

  it("maps a full store to resource_exhausted, an outage to unavailable, the rest to internal", () => {
    const full = toNatsFlotillaError(
      apiError(10023, 503),
      "Cannot put",
      undefined,
    );
    expect(full).toMatchObject({ code: "resource_exhausted" });
    expect((full as Error).message).toMatch(
      /^Cannot put: the JetStream store is full \(refused\)/,
    );
    const outage = toNatsFlotillaError(
      new TimeoutError(),
      "Cannot get",
      undefined,
    );
    expect(outage).toMatchObject({ code: "unavailable" });
    expect((outage as Error).message).toMatch(/^Cannot get: /);
    expect(
      toNatsFlotillaError(new Error("odd"), "Cannot list", undefined),
    ).toMatchObject({ code: "internal", message: "Cannot list: odd" });
  });
});
