/**
 * What the fleet can upgrade to (docs/engine.md, "The version catalogue"): the offers each cluster's
 * agent reports with its facts, merged with the releases an operator published to the hub. Update
 * runs take their available versions from here when they are created, and see later changes as
 * events; auto-upgrade profiles resolve their channels against it.
 */
import type { AvailableVersions } from "@flotilla/core";

/** The hub's view of the version catalogue, kept current from cluster facts and the releases bucket. */
export interface FleetCatalogue {
  /**
   * Everything offered to any member of `clusters` (every known cluster when omitted): each
   * cluster's own offers, restricted to that cluster, plus the operator's releases.
   */
  available(clusters?: readonly string[]): AvailableVersions;
  /** Calls `listener` after each change of {@link available}; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}
