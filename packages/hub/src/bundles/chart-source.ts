/**
 * Where a Helm bundle's chart comes from when it is not in the bundle directory: a chart
 * repository, an OCI registry or an archive URL (docs/bundles.md). The hub fetches it when the
 * bundle is applied and stores the packaged chart as bundle content.
 */
import type { Result } from "@flotilla/core";

/** fleet.yaml `helm.repo` / `helm.chart` / `helm.version`, validated. */
export interface ChartReference {
  /** A chart repository's URL (`helm.repo`); absent for OCI and archive URLs. */
  readonly repo?: string;
  /** The chart's name in `repo`, an `oci://` reference, or an `https://` URL of a `.tgz`. */
  readonly chart: string;
  /** A version or a semver range as helm accepts it; absent: the newest. */
  readonly version?: string;
}

/** A fetched chart: the packaged archive and what it says of itself. */
export interface FetchedChart {
  readonly name: string;
  readonly version: string;
  /** The `.tgz` helm packaged. */
  readonly archive: Uint8Array;
}

/** Fetches charts; the hub has one when it is configured to reach chart sources. */
export interface ChartFetcher {
  fetch(
    reference: ChartReference,
    signal?: AbortSignal,
  ): Promise<Result<FetchedChart>>;
}
