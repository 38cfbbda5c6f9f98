/**
 * The simulated cluster's {@link UpgradeDriver}: upgrades take the configured duration on the
 * injected clock, split evenly over their steps (control plane, then each node pool), fail as
 * configured, refuse to start outside the owner's window, and on success change the facts that
 * `current()` reports. A simulated upgrade is all or nothing: a failed or aborted one changes
 * nothing.
 */
import {
  canonicalJson,
  compareKubernetesVersions,
  formatKubernetesVersion,
  minorDistance,
  parseKubernetesVersion,
  type NodePool,
  type UpgradeType,
} from "@flotilla/core";
import { checkWindow, upgradeScope } from "../upgrade/check-window.js";
import type {
  PlatformFacts,
  UpgradeDriver,
  UpgradeOutcome,
  UpgradeRequest,
} from "../upgrade/driver.js";
import type { MaintenanceSource } from "../upgrade/maintenance-source.js";
import type { Clock } from "@flotilla/node";
import type { SimulatedClusterConfig } from "./config.js";
import { sampleMs } from "./distribution.js";
import type { Random } from "./random.js";

/** Dependencies of {@link createSimulatedDriver}. */
export interface SimulatedDriverDeps {
  readonly config: SimulatedClusterConfig;
  readonly clock: Clock;
  readonly random: Random;
  readonly windows: MaintenanceSource;
  readonly lifetime: AbortSignal;
  readonly assertRunning: () => void;
}

/** An upgrade that cannot be done (the outcome to report), or its steps and the facts after it. */
type Plan =
  | { readonly type: "refused"; readonly outcome: UpgradeOutcome }
  | {
      readonly type: "planned";
      readonly steps: readonly string[];
      readonly after: PlatformFacts;
      readonly version?: string;
    };

function failed(
  reason: "InvalidTarget" | "VersionSkew",
  message: string,
): Plan {
  return { type: "refused", outcome: { type: "Failed", reason, message } };
}

/** What the upgrade changes, as steps and the facts after it; or why it cannot be done. */
function plan(facts: PlatformFacts, req: UpgradeRequest, what: string): Plan {
  const images = req.target.nodeImages ?? [];
  const unknown = images.find(
    (i) => !facts.nodePools.some((p) => p.name === i.pool),
  );
  if (unknown !== undefined)
    return failed(
      "InvalidTarget",
      `${what}: node pool "${unknown.pool}" does not exist`,
    );
  const imageOf = (p: NodePool): string =>
    images.find((i) => i.pool === p.name)?.to ?? p.imageVersion;
  if (req.type === "NodeImageOnly") {
    if (images.length === 0)
      return failed(
        "InvalidTarget",
        `${what}: a NodeImageOnly upgrade needs target.nodeImages`,
      );
    return {
      type: "planned",
      steps: images.map((i) => `node pool "${i.pool}" to image ${i.to}`),
      after: {
        ...facts,
        nodePools: facts.nodePools.map((p) => ({
          ...p,
          imageVersion: imageOf(p),
        })),
      },
    };
  }
  const raw = req.target.kubernetesVersion;
  const target =
    raw === undefined
      ? undefined
      : parseKubernetesVersion(raw.replace(/^v/, ""), "full");
  if (target === undefined || !target.ok)
    return failed(
      "InvalidTarget",
      `${what}: a ${req.type} upgrade needs a full target.kubernetesVersion (got ${JSON.stringify(raw)})`,
    );
  const version = formatKubernetesVersion(target.value);
  const from = facts.kubernetesVersion;
  const current = from === undefined ? undefined : parseKubernetesVersion(from);
  if (current?.ok === true) {
    if (compareKubernetesVersions(current.value, target.value) > 0)
      return failed(
        "VersionSkew",
        `${what}: ${from ?? ""} is newer than ${version}; Kubernetes does not downgrade`,
      );
    if (minorDistance(current.value, target.value) > 1)
      return failed(
        "VersionSkew",
        `${what}: ${from ?? ""} to ${version} skips a minor version; upgrade one minor at a time`,
      );
  }
  const full = req.type === "Full";
  const nodePools = facts.nodePools.map((p): NodePool => {
    if (full)
      return {
        name: p.name,
        imageFamily: p.imageFamily,
        imageVersion: imageOf(p),
      };
    // The control plane moves on; kubelets stay where they were.
    const kubelet =
      p.kubernetesVersion ?? (from === version ? undefined : from);
    return kubelet === undefined ? p : { ...p, kubernetesVersion: kubelet };
  });
  const steps = [`control plane to ${version}`];
  if (full)
    steps.push(
      ...facts.nodePools.map((p) => `node pool "${p.name}" to ${version}`),
    );
  return {
    type: "planned",
    steps,
    after: { kubernetesVersion: version, nodePools },
    version,
  };
}

/** Creates the upgrade driver of one simulated cluster. */
export function createSimulatedDriver(
  deps: SimulatedDriverDeps,
): UpgradeDriver {
  const { config, clock, random, windows, lifetime } = deps;
  let facts: PlatformFacts = {
    kubernetesVersion: config.kubernetesVersion,
    nodePools: config.nodePools,
  };
  let inFlight: string | undefined;
  const supports = (type: UpgradeType): boolean =>
    config.upgradeTypes.includes(type);

  return {
    supports,
    current(options = {}) {
      return new Promise((resolve) => {
        options.signal?.throwIfAborted();
        resolve(facts);
      });
    },
    async start(req, options = {}) {
      deps.assertRunning();
      options.signal?.throwIfAborted();
      const what = `Cannot upgrade cluster "${config.name}" for run "${req.run}"`;
      if (!supports(req.type))
        return {
          type: "Failed",
          reason: "Unsupported",
          message: `${what}: ${req.type} upgrades are not supported (supported: ${config.upgradeTypes.join(", ")})`,
        };
      if (inFlight !== undefined)
        return {
          type: "Failed",
          reason: "Busy",
          message: `${what}: run "${inFlight}" is upgrading it`,
        };
      const planned = plan(facts, req, what);
      if (planned.type === "refused") return planned.outcome;
      // Nothing to change needs no window: the member is done whatever the hour.
      if (canonicalJson(planned.after) === canonicalJson(facts))
        return { type: "Succeeded", message: "Already at the target", facts };
      const hold = checkWindow(
        windows.current().maintenance,
        upgradeScope(req.type),
        clock.now(),
      );
      if (hold !== undefined) return { type: "Pending", ...hold };
      const durationMs = sampleMs(config.upgradeDuration, random);
      const draw = random();
      const failAfter = Math.max(1, Math.ceil(planned.steps.length / 2));
      const f = config.failures;
      const cause =
        planned.version !== undefined && f.versions.includes(planned.version)
          ? `failures.versions lists ${planned.version}`
          : draw < f.upgradeRate
            ? `failures.upgradeRate ${String(f.upgradeRate)}`
            : undefined;
      const signal = AbortSignal.any([
        lifetime,
        ...(options.signal ? [options.signal] : []),
      ]);
      const progress = (done: number, message: string): void =>
        options.onProgress?.({
          percent: Math.floor((100 * done) / planned.steps.length),
          message,
        });
      inFlight = req.run;
      try {
        for (const [i, step] of planned.steps.entries()) {
          progress(i, `Upgrading ${step}`);
          const n = planned.steps.length;
          const stepMs =
            Math.round((durationMs * (i + 1)) / n) -
            Math.round((durationMs * i) / n);
          await clock.sleep(stepMs, { signal });
          if (cause !== undefined && i + 1 === failAfter)
            return {
              type: "Failed",
              reason: "UpgradeFailed",
              message: `${what}: ${step} failed (simulated: ${cause})`,
            };
        }
      } catch (error) {
        throw signal.reason ?? error;
      } finally {
        inFlight = undefined;
      }
      facts = planned.after;
      progress(planned.steps.length, "Upgrade complete");
      return {
        type: "Succeeded",
        message: `Upgraded ${planned.steps.join(", ")}`,
        facts,
      };
    },
  };
}
