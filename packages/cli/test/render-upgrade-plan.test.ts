/**
 * The per-member targets of an upgrade, before its start (`simulate` and `plan --channel`): members
 * with the same target on one line, then those that wait, skip or fail, by reason.
 */
import { describe, expect, it } from "vitest";
import {
  changedTargetLines,
  upgradePlanLines,
} from "../src/render/upgrade-plan.js";
import type { UpgradePlan } from "../src/render/preview-types.js";
import { plainOptions } from "./fixtures.js";

const U = "AKSUbuntu-2204gen2containerd";
const to = (v: string) => [{ pool: "system", from: "202602.15.0", to: v }];

const plan: UpgradePlan = {
  at: "2026-03-02T10:00:00Z",
  upgrade: {
    type: "Full",
    kubernetesVersion: "1.31.2",
    nodeImageSelection: "Consistent",
  },
  consistentNodeImages: { [U]: "202603.01.0" },
  missingNodeImages: ["Windows2022"],
  members: [
    {
      name: "c-1",
      wave: "canary",
      group: "canary",
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: to("202603.01.0"),
      message: "",
    },
    {
      name: "p-1",
      wave: "prod",
      group: "prod",
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: to("202603.01.0"),
      message: "",
    },
    {
      name: "p-2",
      wave: "prod",
      group: "prod",
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: [],
      message: "",
    },
    {
      name: "p-3",
      wave: "prod",
      group: "prod",
      action: "upgrade",
      kubernetesVersion: "1.31.2",
      nodeImages: to("202603.01.0"),
      reason: "TargetNotAvailable",
      message:
        'Kubernetes 1.31.2 is not yet available in region "eastus" of cluster "p-3"',
    },
    {
      name: "p-4",
      wave: "prod",
      group: "prod",
      action: "skip",
      reason: "MinorVersionSkew",
      message: "",
    },
    {
      name: "p-5",
      wave: "prod",
      group: "prod",
      action: "fail",
      reason: "LongTermSupport",
      message: "",
    },
  ],
};

describe("upgradePlanLines", () => {
  it("groups members by target and lists waits, skips and failures with their reasons", () => {
    expect(upgradePlanLines(plan, plainOptions())).toEqual([
      "Targets (Full upgrade to 1.31.2, node images Consistent):",
      `  Consistent node images: ${U} 202603.01.0`,
      "  No node image offered to every member: Windows2022",
      "  → 1.31.2, system 202603.01.0 (2): c-1, p-1",
      "  → 1.31.2 (1): p-2",
      "  waits until its target is offered (TargetNotAvailable) (1): p-3",
      "  skip (MinorVersionSkew) (1): p-4",
      "  fail (LongTermSupport) (1): p-5",
    ]);
  });

  it("says when there is nothing to upgrade", () => {
    expect(
      upgradePlanLines(
        {
          at: plan.at,
          upgrade: { type: "NodeImageOnly", nodeImageSelection: "Latest" },
          members: [],
        },
        plainOptions(),
      ),
    ).toEqual([
      "Targets (node-image upgrade, node images Latest):",
      "  (no members)",
    ]);
  });
});

/** A member that started with Kubernetes 1.31.2 and `image` on its system pool. */
const took = (name: string, image: string) => ({
  name,
  target: { kubernetesVersion: "1.31.2", nodeImages: to(image) },
});

describe("changedTargetLines", () => {
  const cases: {
    name: string;
    started: Parameters<typeof changedTargetLines>[1];
    lines: string[];
  }[] = [
    {
      name: "lists the members started with another target than planned, by the target they took",
      started: [
        took("c-1", "202603.01.0"),
        took("p-1", "202603.08.0"),
        took("p-3", "202603.08.0"),
        { name: "p-4" },
      ],
      lines: [
        "Targets taken at each member's start, where they differ from the plan:",
        "  → 1.31.2, system 202603.08.0 (2): p-1, p-3",
      ],
    },
    {
      name: "prints nothing when every member took its planned target",
      started: [took("c-1", "202603.01.0")],
      lines: [],
    },
  ];

  it.each(cases)("$name", ({ started, lines }) => {
    expect(changedTargetLines(plan, started, plainOptions())).toEqual(lines);
  });
});
