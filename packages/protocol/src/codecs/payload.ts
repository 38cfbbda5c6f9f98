/**
 * What a run rolls out, on the wire: an upgrade (docs/semantics.md#upgrades) or a bundle revision.
 * Upgrades are decoded through core's own `upgradeField`, so the rules (a version for Full and
 * ControlPlaneOnly, none for NodeImageOnly, security patches for NodeImageOnly only, long-term
 * support for Kubernetes upgrades only) are one code.
 */
import {
  fail,
  joinPath,
  ok,
  upgradeField,
  type NodeImageSelection,
  type Result,
  type RunPayload,
  type UpgradePayload,
  type UpgradeType,
  compact,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import { MAX_ID_LENGTH } from "../limits.js";
import { enumCodec } from "./enum-codec.js";
import { issuesToProblems } from "./validate.js";

/** Upgrade types ↔ `UPGRADE_TYPE_*`. */
export const UPGRADE_TYPE = enumCodec<UpgradeType, wire.UpgradeType__Output>({
  Full: "UPGRADE_TYPE_FULL",
  ControlPlaneOnly: "UPGRADE_TYPE_CONTROL_PLANE_ONLY",
  NodeImageOnly: "UPGRADE_TYPE_NODE_IMAGE_ONLY",
});

/** Node-image selections ↔ `NODE_IMAGE_SELECTION_*`. */
export const NODE_IMAGE_SELECTION = enumCodec<
  NodeImageSelection,
  wire.NodeImageSelection__Output
>({
  Latest: "NODE_IMAGE_SELECTION_LATEST",
  Consistent: "NODE_IMAGE_SELECTION_CONSISTENT",
});

/** Encodes an upgrade payload. */
export function upgradePayloadToWire(
  payload: UpgradePayload,
): wire.UpgradePayload {
  return {
    type: UPGRADE_TYPE.toWire(payload.type),
    ...(payload.type === "NodeImageOnly"
      ? {}
      : { kubernetesVersion: payload.kubernetesVersion }),
    nodeImageSelection: NODE_IMAGE_SELECTION.toWire(payload.nodeImageSelection),
    securityPatchOnly:
      payload.type === "NodeImageOnly" && payload.securityPatchOnly === true,
    requiresLongTermSupport:
      payload.type !== "NodeImageOnly" &&
      payload.requiresLongTermSupport === true,
  };
}

/**
 * Decodes an upgrade payload. NODE_IMAGE_SELECTION_UNSPECIFIED means the default, Latest; an
 * unspecified or unknown type is a problem.
 */
export function upgradePayloadFromWire(
  raw: wire.UpgradePayload__Output,
  path = "upgrade",
): Result<UpgradePayload> {
  const type = UPGRADE_TYPE.fromWire(raw.type);
  if (type === undefined) {
    return fail([
      {
        path: joinPath(path, "type"),
        message: `must be one of ${UPGRADE_TYPE.values.map((v) => UPGRADE_TYPE.toWire(v)).join(", ")}`,
        value: raw.type,
      },
    ]);
  }
  const selection =
    raw.nodeImageSelection === "NODE_IMAGE_SELECTION_UNSPECIFIED"
      ? "Latest"
      : NODE_IMAGE_SELECTION.fromWire(raw.nodeImageSelection);
  if (selection === undefined) {
    return fail([
      {
        path: joinPath(path, "nodeImageSelection"),
        message: `must be one of ${NODE_IMAGE_SELECTION.values.map((v) => NODE_IMAGE_SELECTION.toWire(v)).join(", ")}`,
        value: raw.nodeImageSelection,
      },
    ]);
  }
  const parsed = upgradeField.safeParse(
    {
      type,
      ...compact({ kubernetesVersion: raw.kubernetesVersion }),
      nodeImageSelection: selection,
      ...(raw.securityPatchOnly ? { securityPatchOnly: true } : {}),
      ...(raw.requiresLongTermSupport ? { requiresLongTermSupport: true } : {}),
    },
    { reportInput: true },
  );
  if (parsed.success) return ok(parsed.data);
  return fail(issuesToProblems(parsed.error, path));
}

/** Encodes a run payload. */
export function runPayloadToWire(payload: RunPayload): wire.RunPayload {
  return payload.kind === "upgrade"
    ? { upgrade: upgradePayloadToWire(payload.upgrade) }
    : { bundle: { bundle: payload.bundle, revision: payload.revision } };
}

/** Decodes a run payload: exactly one of `upgrade` and `bundle`. */
export function runPayloadFromWire(
  raw: wire.RunPayload__Output | null | undefined,
  path = "payload",
): Result<RunPayload> {
  if (raw?.upgrade != null) {
    const upgrade = upgradePayloadFromWire(
      raw.upgrade,
      joinPath(path, "upgrade"),
    );
    return upgrade.ok
      ? ok({ kind: "upgrade", upgrade: upgrade.value })
      : upgrade;
  }
  const bundle = raw?.bundle;
  if (bundle == null) {
    return fail([{ path, message: "must set one of upgrade, bundle" }]);
  }
  // An empty revision asks for the bundle's current one (docs/semantics.md#staged-bundle-runs).
  const problems = (["bundle", "revision"] as const).flatMap((field) => {
    const value = bundle[field];
    const min = field === "revision" ? 0 : 1;
    return value.length < min || value.length > MAX_ID_LENGTH
      ? [
          {
            path: joinPath(joinPath(path, "bundle"), field),
            message: `must be ${String(min)} to ${String(MAX_ID_LENGTH)} characters`,
            value,
          },
        ]
      : [];
  });
  if (problems.length > 0) return fail(problems);
  return ok({
    kind: "bundle",
    bundle: bundle.bundle,
    revision: bundle.revision,
  });
}
