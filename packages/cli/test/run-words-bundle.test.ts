/**
 * A bundle run's members in `flotilla run status` (docs/semantics.md#staged-bundle-runs): the
 * revision each member was sent, and what its agent last reported of it.
 */
import type { MemberView } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { memberFacts } from "../src/render/run-words.js";
import { createStyle } from "../src/render/style.js";
import { NOW_MS } from "./fixtures.js";

const base: MemberView = {
  name: "prod-1",
  state: "Running",
  message: "Started",
  stateChangedAtMs: NOW_MS - 60_000,
  startedAtMs: NOW_MS - 60_000,
  failureCount: 0,
  unreachable: false,
  constrained: false,
  target: { revision: "sha256:1111222233334444" },
};

describe("bundle run members", () => {
  it("name the revision and the agent's last report while running", () => {
    const facts = memberFacts(
      { ...base, lastReport: "NotReady: deployment web: 0/1 ready" },
      createStyle(false),
      NOW_MS,
    );
    expect(facts).toContain("revision 111122223333");
    expect(facts).toContain("agent: NotReady: deployment web: 0/1 ready");
  });

  it("say when the agent has reported nothing yet, and Ready once succeeded", () => {
    const style = createStyle(false);
    expect(memberFacts(base, style, NOW_MS)).toContain(
      "agent: nothing reported yet",
    );
    expect(
      memberFacts({ ...base, state: "Succeeded" }, style, NOW_MS),
    ).toContain("agent: Ready");
  });

  it("say nothing of revisions for upgrade members", () => {
    const facts = memberFacts(
      { ...base, target: { kubernetesVersion: "1.31.2", nodeImages: [] } },
      createStyle(false),
      NOW_MS,
    );
    expect(facts.some((f) => f.startsWith("revision"))).toBe(false);
  });
});
