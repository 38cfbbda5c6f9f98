/**
 * A FleetCatalogue for tests whose offers the test sets: each `set` is one change its listeners
 * hear (the hub's real catalogue is built from agents' facts and published releases).
 */
import type { AvailableVersions } from "@flotilla/core";
import type { FleetCatalogue } from "../../src/catalogue/fleet-catalogue.js";

export interface TestCatalogue extends FleetCatalogue {
  set(available: AvailableVersions): void;
}

export function createTestCatalogue(
  initial: AvailableVersions = { kubernetes: [], nodeImages: [] },
): TestCatalogue {
  let current = initial;
  const listeners = new Set<() => void>();
  return {
    available: () => current,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    set(available) {
      current = available;
      for (const listener of listeners) listener();
    },
  };
}
