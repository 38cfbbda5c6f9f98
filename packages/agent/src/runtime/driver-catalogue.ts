/**
 * The catalogue of a real cluster's driver as the agent follows it (docs/agent.md#the-version-catalogue):
 * read with the facts, and re-read on the windows' reload interval so a release the platform
 * announces (a channel Plan resolving a new version, a new machine template) reaches the hub
 * without waiting for the next upgrade. A failed read keeps the last catalogue and says why.
 */
import { canonicalJson, FlotillaError } from "@flotilla/core";
import type { VersionCatalogue } from "@flotilla/protocol";
import type { PlatformFacts, UpgradeDriver } from "../upgrade/driver.js";
import type { AgentBackend } from "./agent-backend.js";
import { createListenerSet } from "@flotilla/node";

export interface DriverCatalogue extends NonNullable<
  AgentBackend["catalogue"]
> {
  /** The catalogue for `platform` now; the last one read when the driver cannot answer. */
  read(
    platform: PlatformFacts,
    options?: { readonly signal?: AbortSignal },
  ): Promise<VersionCatalogue | undefined>;
}

export function createDriverCatalogue(driver: UpgradeDriver): DriverCatalogue {
  const listeners = createListenerSet();
  let last: VersionCatalogue | undefined;
  let problem: string | undefined;
  const read: DriverCatalogue["read"] = async (platform, options = {}) => {
    if (driver.catalogue === undefined) return undefined;
    try {
      last = await driver.catalogue(platform, options);
      problem = undefined;
    } catch (error) {
      options.signal?.throwIfAborted();
      problem = `Cannot read the cluster's version catalogue: ${FlotillaError.from(error).message}; the last one read stays`;
    }
    return last;
  };
  return {
    read,
    error: () => problem,
    async reload(options = {}) {
      if (driver.catalogue === undefined) return;
      const before = canonicalJson(last ?? null);
      await read(await driver.current(options), options);
      if (canonicalJson(last ?? null) !== before) listeners.emit();
    },
    watch(listener, options = {}) {
      return listeners.add(listener, options);
    },
  };
}
