/**
 * The version catalogue of a Cluster API cluster (docs/agent.md#the-version-catalogue). A node pool
 * is a MachineDeployment and its image is its infrastructure machine template, which a node-image
 * upgrade switches to another existing template of the same kind: so each pool can move to the
 * templates of its template's kind in the cluster's namespace. Cluster API keeps no list of
 * Kubernetes releases (the control plane takes whatever `spec.version` it is given), so none is
 * reported: the hub then takes an operator's target, or the releases published with
 * `flotilla release add kubernetes`.
 */
import type { VersionCatalogue } from "@flotilla/protocol";
import {
  MAX_CATALOGUE_IMAGE_VERSIONS,
  NODE_IMAGE_VERSION,
} from "@flotilla/protocol";
import { refAt, type ObjectRef } from "./capi-objects.js";
import { stringAt, type JsonRecord } from "./kube-upgrade.js";

/** Lists the objects of a template kind in the cluster's namespace. */
export type ListTemplates = (
  ref: Omit<ObjectRef, "name">,
) => Promise<readonly JsonRecord[]>;

export async function capiCatalogue(
  machineDeployments: readonly JsonRecord[],
  list: ListTemplates,
): Promise<VersionCatalogue> {
  const byKind = new Map<string, Promise<readonly JsonRecord[]>>();
  const nodePools = await Promise.all(
    machineDeployments.map(async (md) => {
      const pool = stringAt(md, "metadata", "name") ?? "";
      const infra = refAt(md, "spec", "template", "spec", "infrastructureRef");
      if (infra === undefined) return { pool, imageVersions: [] };
      const key = `${infra.apiVersion}/${infra.kind}`;
      let templates = byKind.get(key);
      if (templates === undefined) {
        templates = list({ apiVersion: infra.apiVersion, kind: infra.kind });
        byKind.set(key, templates);
      }
      const names = (await templates)
        .map((t) => stringAt(t, "metadata", "name") ?? "")
        // Template names are DNS names; those that are not node-image versions are left out.
        .filter((name) => NODE_IMAGE_VERSION.test(name))
        .sort()
        .slice(0, MAX_CATALOGUE_IMAGE_VERSIONS);
      return { pool, imageVersions: names };
    }),
  );
  return { kubernetes: [], nodePools };
}
