/**
 * The definitions end to end: a real grpc-js server and client on 127.0.0.1:0, in process.
 */
import { describe, expect, it } from "vitest";
import { once } from "node:events";
import {
  credentials,
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import {
  FlotillaError,
  parseUpdateStrategy,
  type Problem,
} from "@flotilla/core";
import {
  callUnary,
  createAdminServiceClient,
  createAgentServiceClient,
  loadProtocol,
  PROTOCOL_VERSION,
  runFromWire,
  runToWire,
  SERVER_OPTIONS,
  statusReportFromWire,
  statusReportToWire,
  streamErrorToWire,
  toGrpcStatus,
  type wire,
} from "@flotilla/protocol";
import { addAgentService } from "@flotilla/protocol/testing";
import { runInProgress, T0, valueOf } from "./fixtures.js";

/** A server on a free loopback port, shut down when the test's scope ends. */
async function startServer(
  register: (server: Server) => void,
): Promise<{ readonly address: string } & AsyncDisposable> {
  const server = new Server(SERVER_OPTIONS);
  register(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      "127.0.0.1:0",
      ServerCredentials.createInsecure(),
      (error, bound) => {
        if (error === null) resolve(bound);
        else reject(error);
      },
    );
  });
  return {
    address: `127.0.0.1:${String(port)}`,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      }),
  };
}

/** A hub's AgentService, reduced to the handshake and acknowledgements. */
const agentHandlers: wire.AgentServiceHandlers = {
  Connect(call) {
    call.on("data", (message: wire.AgentMessage__Output) => {
      switch (message.body) {
        case "hello":
          call.write({
            welcome: {
              clusterName: message.hello?.clusterName ?? "",
              protocolVersion: PROTOCOL_VERSION,
              heartbeatIntervalMs: 10_000,
              hubTimeMs: T0,
            },
          });
          break;
        case "status": {
          const report = statusReportFromWire(message.status);
          if (report.ok) {
            call.write({
              ack: {
                sequence: report.value.sequence,
                generation: report.value.generation,
                accepted: true,
              },
            });
          } else {
            call.write({
              error: streamErrorToWire(
                FlotillaError.invalid("status report", report.problems),
              ),
            });
            call.end();
          }
          break;
        }
        case "facts":
        case "heartbeat":
        case "windowsChanged":
        case undefined:
          break;
      }
    });
    call.on("end", () => {
      call.end();
    });
  },
  Register(_call, callback) {
    callback(toGrpcStatus(new FlotillaError("unauthenticated", "no token")));
  },
  RenewIdentity(_call, callback) {
    callback(toGrpcStatus(new FlotillaError("unauthenticated", "no cert")));
  },
};

/** A slice of AdminService: strategies validated by core, a run watch, and a call that hangs. */
const adminHandlers: UntypedServiceImplementation = {
  CreateUpdateStrategy(
    call: ServerUnaryCall<
      wire.CreateUpdateStrategyRequest__Output,
      wire.CreateUpdateStrategyResponse
    >,
    callback: sendUnaryData<wire.CreateUpdateStrategyResponse>,
  ) {
    const parsed = parseUpdateStrategy(JSON.parse(call.request.strategyJson));
    if (!parsed.ok) {
      callback(
        toGrpcStatus(FlotillaError.invalid("strategy", parsed.problems)),
      );
      return;
    }
    callback(null, {
      strategy: {
        name: call.request.name,
        strategyJson: call.request.strategyJson,
        createdAtMs: T0,
        revision: 1,
      },
    });
  },
  GetUpdateStrategy() {
    // Never answers: the client's deadline or signal ends the call.
  },
  WatchUpdateRun(
    call: ServerWritableStream<
      wire.WatchUpdateRunRequest__Output,
      wire.WatchUpdateRunResponse
    >,
  ) {
    call.write({ snapshot: runToWire(runInProgress(), 5) });
    call.end();
  },
};

describe("gRPC end to end", () => {
  it("answers an agent's Hello with Welcome and acknowledges its status reports", async () => {
    await using server = await startServer((s) => {
      addAgentService(s, agentHandlers);
    });
    const client = createAgentServiceClient(
      server.address,
      credentials.createInsecure(),
    );
    try {
      const stream = client.connect();
      const received: wire.HubMessage__Output[] = [];
      stream.on("data", (m: wire.HubMessage__Output) => received.push(m));
      stream.write({
        hello: {
          clusterName: "prod-eu-1",
          agentVersion: "0.1.0",
          protocolVersion: PROTOCOL_VERSION,
        },
      });
      stream.write({
        status: statusReportToWire({
          sequence: 1,
          generation: 4,
          subject: { kind: "upgrade", upgradeId: "upgrade-1-31" },
          phase: "Applying",
          reasons: [],
          reasonsTruncated: 0,
          observedAtMs: T0,
        }),
      });
      stream.end();
      await once(stream, "end");
      expect(received).toEqual([
        {
          body: "welcome",
          welcome: {
            clusterName: "prod-eu-1",
            protocolVersion: 1,
            heartbeatIntervalMs: 10_000,
            hubTimeMs: T0,
          },
        },
        {
          body: "ack",
          ack: { sequence: 1, generation: 4, accepted: true, reason: "" },
        },
      ]);
    } finally {
      client.close();
    }
  });

  it("sends a StreamError for a malformed report, then closes the stream", async () => {
    await using server = await startServer((s) => {
      addAgentService(s, agentHandlers);
    });
    const client = createAgentServiceClient(
      server.address,
      credentials.createInsecure(),
    );
    try {
      const stream = client.connect();
      const received: wire.HubMessage__Output[] = [];
      stream.on("data", (m: wire.HubMessage__Output) => received.push(m));
      stream.write({
        status: {
          generation: 1,
          upgradeId: "u-1",
          phase: "STATUS_PHASE_READY",
        },
      });
      await once(stream, "end");
      expect(received.map((m) => m.body)).toEqual(["error"]);
      expect(received[0]?.error?.code).toBe("ERROR_CODE_INVALID_ARGUMENT");
      expect(received[0]?.error?.problems.map((p) => p.path)).toEqual([
        "status.observedAtMs",
      ]);
      stream.end();
    } finally {
      client.close();
    }
  });

  it("maps an INVALID_ARGUMENT answer back to a FlotillaError with core's problems intact", async () => {
    await using server = await startServer((s) => {
      s.addService(loadProtocol().adminService, adminHandlers);
    });
    const admin = createAdminServiceClient(
      server.address,
      credentials.createInsecure(),
    );
    try {
      const strategy = {
        stages: [
          { name: "Canary", maxConcurrency: "0%" },
          { name: "prod", afterStageWaitInSecs: 5 },
        ],
      };
      const expected = parseUpdateStrategy(strategy);
      expect(expected.ok).toBe(false);
      const problems: readonly Problem[] = expected.ok ? [] : expected.problems;
      expect(problems.length).toBeGreaterThanOrEqual(3);

      const error: unknown = await callUnary(admin, "createUpdateStrategy", {
        name: "rings",
        strategyJson: JSON.stringify(strategy),
        reason: "test",
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FlotillaError);
      expect(error).toMatchObject({ code: "invalid_argument", problems });

      const created = await callUnary(admin, "CreateUpdateStrategy", {
        name: "rings",
        strategyJson: JSON.stringify({
          stages: [{ name: "all", groups: [{ name: "all" }] }],
        }),
        reason: "test",
      });
      expect(created.strategy).toMatchObject({ name: "rings", revision: 1 });
    } finally {
      admin.close();
    }
  });

  it("ends a unary call at its deadline or when its signal aborts", async () => {
    await using server = await startServer((s) => {
      s.addService(loadProtocol().adminService, adminHandlers);
    });
    const admin = createAdminServiceClient(
      server.address,
      credentials.createInsecure(),
    );
    try {
      await expect(
        callUnary(admin, "getUpdateStrategy", { name: "x" }, { timeoutMs: 50 }),
      ).rejects.toMatchObject({ code: "deadline_exceeded" });
      const controller = new AbortController();
      const call = callUnary(
        admin,
        "getUpdateStrategy",
        { name: "x" },
        { signal: controller.signal },
      );
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: "unavailable" });
      await expect(
        callUnary(
          admin,
          "getUpdateStrategy",
          { name: "x" },
          { signal: controller.signal },
        ),
      ).rejects.toMatchObject({ code: "unavailable" });
    } finally {
      admin.close();
    }
  });

  it("streams a run snapshot that decodes to core's names", async () => {
    await using server = await startServer((s) => {
      s.addService(loadProtocol().adminService, adminHandlers);
    });
    const admin = createAdminServiceClient(
      server.address,
      credentials.createInsecure(),
    );
    try {
      const stream = admin.watchUpdateRun({ name: "upgrade-1-31" });
      const events: wire.WatchUpdateRunResponse__Output[] = [];
      stream.on("data", (e: wire.WatchUpdateRunResponse__Output) =>
        events.push(e),
      );
      await once(stream, "end");
      expect(events.map((e) => e.event)).toEqual(["snapshot"]);
      const snapshot = events[0]?.snapshot;
      if (snapshot == null) throw new Error("no snapshot");
      const view = valueOf(runFromWire(snapshot));
      expect(view).toMatchObject({
        name: "upgrade-1-31",
        state: "Pending",
        revision: 5,
      });
    } finally {
      admin.close();
    }
  });

  it("types unary calls by method name (the checks are tsc's, on this file)", () => {
    const checks = (admin: wire.AdminServiceClient): unknown[] => [
      // @ts-expect-error streaming methods are not unary
      callUnary(admin, "watchUpdateRun", { name: "x" }),
      // @ts-expect-error the request's fields are checked
      callUnary(admin, "getCluster", { nam: "x" }),
      callUnary(admin, "getCluster", { name: "x" }).then(
        // The response is typed: a wrong field here fails type-checking.
        (response) => response.cluster?.facts?.nodePools.length,
      ),
    ];
    expect(checks).toBeTypeOf("function");
  });
});
