import { describe, expect, test } from "vitest";
import { createMemoryAuditLog } from "../src/audit/memory-audit-log.js";
import {
  collect,
  describeAuditLogContract,
  record,
  rejection,
} from "./audit-log.contract.js";

describeAuditLogContract("memory", async () => {
  const log = createMemoryAuditLog();
  await log.start();
  return { log, peer: log, [Symbol.asyncDispose]: () => log.stop() };
});

describe("createMemoryAuditLog", () => {
  test("calls before start fail with unavailable", async () => {
    const log = createMemoryAuditLog();
    expect((await rejection(log.append(record()))).code).toBe("unavailable");
    expect((await rejection(log.list({}))).code).toBe("unavailable");
    const watch = collect(
      log.watch({}, { signal: new AbortController().signal }),
    );
    expect((await rejection(watch.ended)).code).toBe("unavailable");
  });

  test("records survive stop and start", async () => {
    await using log = createMemoryAuditLog();
    await log.start();
    const event = await log.append(record());
    await log.stop();
    expect((await rejection(log.append(record()))).code).toBe("unavailable");
    await log.start();
    expect((await log.list({})).events).toEqual([event]);
  });
});
