/**
 * How a run's mailbox makes a batch: member reports waiting together become one MembersReported
 * event at the place of the first, everything else keeps its place and order.
 */
import { describe, expect, it } from "vitest";
import type { RunEvent } from "@flotilla/core";
import { takeBatch, type Queued } from "../src/runs/mailbox.js";

const failed = (member: string): RunEvent => ({
  type: "MemberFailed",
  member,
  error: "boom",
});
const ready = (member: string): RunEvent => ({
  type: "MemberSucceeded",
  member,
});

describe("takeBatch", () => {
  it("merges the reports of a batch into one MembersReported at the first one's place, keeping the rest in order", () => {
    const answer = (): void => undefined;
    const queue: Queued<string>[] = [
      { events: [{ type: "Tick" }] },
      { events: [failed("a1")] },
      { events: [{ type: "StopRun", actor: "bob" }], resolve: answer },
      { events: [ready("a2")], receivedAtMs: [5] },
      { events: [{ type: "MemberUnreachable", member: "a4" }] },
      { events: [failed("a3")] },
    ];
    const batch = takeBatch(queue);
    expect(queue).toEqual([]);
    expect(batch.map((q) => q.events.map((e) => e.type))).toEqual([
      ["Tick"],
      ["MembersReported"],
      ["StopRun"],
      ["MemberUnreachable"],
    ]);
    expect(batch[1]).toEqual({
      events: [
        {
          type: "MembersReported",
          reports: [failed("a1"), ready("a2"), failed("a3")],
        },
      ],
      receivedAtMs: [5],
    });
    expect(batch[2]?.resolve).toBe(answer);
  });

  it("leaves a single report, and commands that carry member events, as they are", () => {
    const queue: Queued<string>[] = [
      { events: [ready("a1")], receivedAtMs: [1] },
      // An operator's command is answered on its own, never merged.
      { events: [failed("a2")], resolve: () => undefined },
    ];
    const copy = [...queue];
    expect(takeBatch(queue)).toEqual(copy);
  });
});
