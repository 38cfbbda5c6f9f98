/**
 * A simulated cluster: both agent ports in memory — a {@link KubeGateway} and an
 * {@link UpgradeDriver} — plus the owner's maintenance windows, all driven by an injected clock
 * and randomness so a demo, a benchmark or a test gets the same behaviour from the same seed.
 * One process can host many: {@link createSimulatedClusters} builds a whole fleet file's worth.
 */
import { FlotillaError, compact } from "@flotilla/core";
import type { ClusterFacts, KubernetesObject } from "@flotilla/protocol";
import type { UpgradeDriver } from "../upgrade/driver.js";
import {
  createStaticMaintenanceSource,
  type MaintenanceSource,
} from "../upgrade/maintenance-source.js";
import type { Clock } from "@flotilla/node";
import type { SimulatedClusterConfig, SimulatedFleet } from "./config.js";
import { createMaintenanceFile } from "./maintenance-file.js";
import {
  catalogueFacts,
  createCatalogueSource,
  type CatalogueSource,
} from "./catalogue.js";
import { forkRandom, mulberry32, type Random } from "./random.js";
import { createSimulatedDriver } from "./simulated-driver.js";
import {
  createSimulatedGateway,
  type SimulatedKubeGateway,
} from "./simulated-gateway.js";
import type { TextParser } from "./text-file.js";

/** Dependencies of {@link createSimulatedCluster}. */
export interface SimulatedClusterDeps {
  readonly clock: Clock;
  readonly random: Random;
  /** Needed when `maintenanceFile` is YAML; see text-file.ts. */
  readonly parseText?: TextParser;
}

/** One simulated cluster: the agent's ports and its owner's windows. */
export interface SimulatedCluster extends AsyncDisposable {
  readonly name: string;
  readonly kube: SimulatedKubeGateway;
  /** Simulates applying a Helm bundle: the chart is not rendered, no objects are simulated. */
  readonly renderHelm: () => Promise<readonly KubernetesObject[]>;
  readonly upgrades: UpgradeDriver;
  /** From `maintenanceFile` (reload() re-reads it), inline `maintenance`, or none. */
  readonly windows: MaintenanceSource;
  /** From `catalogueFile` (reload() re-reads it), inline `catalogue`, or none. */
  readonly catalogue: CatalogueSource;
  /** What the agent registers with: labels, region, versions, node pools, windows in force. */
  facts(): Promise<ClusterFacts>;
  /** Reads the maintenance file; the ports refuse work until started. */
  start(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Ends every wait: in-flight applies and upgrades reject, readiness timers stop. */
  stop(): Promise<void>;
}

/** Creates a simulated cluster from its resolved config. */
export function createSimulatedCluster(
  config: SimulatedClusterConfig,
  deps: SimulatedClusterDeps,
): SimulatedCluster {
  const lifetime = new AbortController();
  let state: "new" | "running" | "stopped" = "new";
  const assertRunning = (): void => {
    if (state !== "running")
      throw new FlotillaError(
        state === "new" ? "failed_precondition" : "unavailable",
        `Cannot use simulated cluster "${config.name}": it is ${state === "new" ? "not started" : "stopped"}`,
      );
  };
  // Separate streams so, say, the number of bundles applied does not change upgrade draws.
  const kubeRandom = forkRandom(deps.random);
  const upgradeRandom = forkRandom(deps.random);
  const windows =
    config.maintenanceFile === undefined
      ? createStaticMaintenanceSource(config.maintenance)
      : createMaintenanceFile(
          config.maintenanceFile,
          compact({ parseText: deps.parseText }),
        );
  const catalogue = createCatalogueSource(
    config,
    compact({ parseText: deps.parseText }),
  );
  const common = {
    config,
    clock: deps.clock,
    lifetime: lifetime.signal,
    assertRunning,
  };
  const kube = createSimulatedGateway({ ...common, random: kubeRandom });
  const upgrades = createSimulatedDriver({
    ...common,
    random: upgradeRandom,
    windows,
  });

  const stop = (): Promise<void> => {
    if (state !== "stopped") {
      state = "stopped";
      lifetime.abort(
        new FlotillaError(
          "unavailable",
          `Simulated cluster "${config.name}" stopped`,
        ),
      );
    }
    return Promise.resolve();
  };

  return {
    name: config.name,
    kube,
    renderHelm: () => Promise.resolve([]),
    upgrades,
    windows,
    catalogue,
    async facts() {
      const platform = await upgrades.current();
      const { maintenance } = windows.current();
      const offered = catalogue.current();
      return {
        labels: config.labels,
        ...platform,
        ...compact({
          region: config.region,
          supportPlan: config.supportPlan,
          maintenance,
          catalogue:
            offered === undefined
              ? undefined
              : catalogueFacts(offered, platform.nodePools),
        }),
      };
    },
    async start(options = {}) {
      if (state === "stopped") assertRunning();
      await windows.reload(options);
      await catalogue.reload(options);
      state = "running";
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Options of {@link createSimulatedClusters}. */
export interface SimulatedClustersDeps {
  readonly clock: Clock;
  readonly parseText?: TextParser;
}

/** Creates every cluster of a fleet, each with its own PRNG seeded from its config (`seed`). */
export function createSimulatedClusters(
  fleet: SimulatedFleet,
  deps: SimulatedClustersDeps,
): SimulatedCluster[] {
  return fleet.clusters.map((config) =>
    createSimulatedCluster(config, {
      ...deps,
      random: mulberry32(config.seed),
    }),
  );
}
