/**
 * Small pure pieces of the admin commands: label arguments, which manifests are
 * uploaded, fleet.yaml checks, and the words for gates, budgets and payloads.
 */
import type { Gate } from "@flotilla/core";
import { MAX_INLINE_MANIFEST_BYTES } from "@flotilla/protocol";
import { describe, expect, it } from "vitest";
import { filesToUpload } from "../src/commands/bundle-request.js";
import { parseFleetYaml } from "../src/commands/fleet-yaml.js";
import { parseLabelChanges } from "../src/commands/label-args.js";
import {
  failureWords,
  gateDetail,
  payloadWords,
} from "../src/render/run-words.js";
import { createStyle } from "../src/render/style.js";
import { NOW_MS } from "./fixtures.js";

const plain = createStyle(false);

describe("parseLabelChanges", () => {
  it("reads sets and removals, and refuses a key both set and removed", () => {
    expect(
      parseLabelChanges(["a=1", "b=", "c-"], { allowRemove: true }),
    ).toEqual({
      ok: true,
      value: { set: { a: "1", b: "" }, remove: ["c"] },
    });
    expect(parseLabelChanges(["a=1", "a-"], { allowRemove: true })).toEqual({
      ok: false,
      problems: [{ path: "", message: "label a is both set and removed" }],
    });
  });
});

describe("filesToUpload", () => {
  const file = (path: string, size: number) => ({
    path,
    content: new Uint8Array(size),
  });

  it("keeps everything inline while the total fits, and uploads the largest files first otherwise", () => {
    const half = Math.floor(MAX_INLINE_MANIFEST_BYTES / 2);
    expect(filesToUpload([file("a", 10), file("b", half)])).toEqual(new Set());
    expect(
      filesToUpload([file("a", half), file("b", half + 10), file("c", 100)]),
    ).toEqual(new Set(["b"]));
    expect(
      filesToUpload([
        file("big", MAX_INLINE_MANIFEST_BYTES + 1),
        file("small", 1),
      ]),
    ).toEqual(new Set(["big"]));
  });
});

describe("parseFleetYaml", () => {
  it("treats an empty file and empty fields as unset", () => {
    expect(parseFleetYaml(null)).toEqual({ ok: true, value: {} });
    expect(parseFleetYaml({ namespace: "web", paused: null })).toEqual({
      ok: true,
      value: { namespace: "web" },
    });
  });

  it("keeps defaultNamespace, points targetNamespace to namespace and suggests the closest key for a typo", () => {
    expect(parseFleetYaml({ defaultNamespace: "web" })).toEqual({
      ok: true,
      value: { defaultNamespace: "web" },
    });
    const result = parseFleetYaml({ targetNamespace: "web", tragets: [] });
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: "targetNamespace",
          message:
            'is Fleet\'s internal name of the fleet.yaml field "namespace": write "namespace"',
          value: "web",
        },
        { path: "tragets", message: 'unknown field; did you mean "targets"?' },
      ],
    });
  });
});

describe("run words", () => {
  const gate = (over: Partial<Gate>): Gate => ({
    id: "stage:prod:before",
    type: "ScheduledStart",
    displayName: "",
    state: "Pending",
    message: "",
    ...over,
  });

  it("offers complete-gate for a pending scheduled start, with when it starts by itself", () => {
    expect(
      gateDetail(
        "r",
        gate({ scheduledAtMs: NOW_MS + 3_600_000 }),
        plain,
        NOW_MS,
      ),
    ).toEqual([
      "starts 2026-03-02T11:00:00Z (in 1h); to start now:",
      "→ flotilla run complete-gate r stage:prod:before",
    ]);
    expect(
      gateDetail(
        "r",
        gate({
          state: "Completed",
          completedBy: "schedule",
          completedAtMs: NOW_MS,
        }),
        plain,
        NOW_MS,
      ),
    ).toEqual(["completed by schedule at 2026-03-02T10:00:00Z"]);
  });

  it("counts failures against the budget and says when it is exceeded", () => {
    expect(
      failureWords({ failureCount: 1, maxAllowedFailures: 2 }, plain),
    ).toBe("failures 1/2");
    expect(
      failureWords({ failureCount: 3, maxAllowedFailures: 2 }, plain),
    ).toBe("failures 3/2 exceeded");
    expect(
      failureWords({ failureCount: 0, maxAllowedFailures: null }, plain),
    ).toBeUndefined();
  });

  it("describes node-image and bundle payloads", () => {
    expect(
      payloadWords({
        kind: "upgrade",
        upgrade: {
          type: "NodeImageOnly",
          nodeImageSelection: "Consistent",
          securityPatchOnly: true,
        },
      }),
    ).toBe("node image upgrade (Consistent, security patches only)");
    expect(
      payloadWords({
        kind: "bundle",
        bundle: "web",
        revision: "sha256:0123456789abcdef0123",
      }),
    ).toBe("bundle web revision 0123456789ab");
  });
});
