/**
 * `flotilla versions [--cluster C]`: what each cluster runs and what it can move to, as
 * `az aks get-upgrades` shows it (docs/cli.md#releases-and-versions): the control plane's version
 * and the upgrades it can take (with LTS and preview marks), and per node pool its image and the
 * newest image offered to it.
 */
import type { wire } from "@flotilla/protocol";
import { EXIT_OK } from "../io.js";
import { adminCommand, prepared } from "../hub/admin-command.js";
import { printJson, printLines } from "../hub/output.js";
import { renderTable, type Column } from "../render/table.js";

/** `1.31.2 (LTS), 1.30.7, 1.32.0 (preview)`, or `none`. */
export function upgradesText(
  upgrades: readonly wire.KubernetesUpgrade__Output[],
): string {
  if (upgrades.length === 0) return "none";
  return upgrades
    .map((u) => {
      const marks = [u.lts ? "LTS" : "", u.preview ? "preview" : ""].filter(
        (m) => m !== "",
      );
      return marks.length === 0
        ? u.version
        : `${u.version} (${marks.join(", ")})`;
    })
    .join(", ");
}

interface PoolRow {
  readonly cluster: string;
  readonly pool: wire.PoolVersions__Output;
}

/** The two tables `flotilla versions` prints. */
export function versionsLines(
  clusters: readonly wire.ClusterVersions__Output[],
  style: Parameters<typeof renderTable>[2],
): string[] {
  const control: Column<wire.ClusterVersions__Output>[] = [
    { header: "CLUSTER", cell: (c) => c.cluster },
    { header: "KUBERNETES", cell: (c) => c.kubernetesVersion ?? "unknown" },
    { header: "UPGRADES", cell: (c) => upgradesText(c.upgrades) },
    {
      header: "SOURCE",
      cell: (c) => (c.reportsCatalogue ? "agent + releases" : "releases"),
    },
  ];
  const rows: PoolRow[] = clusters.flatMap((c) =>
    c.nodePools.map((pool) => ({ cluster: c.cluster, pool })),
  );
  const pools: Column<PoolRow>[] = [
    { header: "CLUSTER", cell: (r) => r.cluster },
    { header: "NODE POOL", cell: (r) => r.pool.pool },
    { header: "IMAGE FAMILY", cell: (r) => r.pool.imageFamily },
    { header: "IMAGE", cell: (r) => r.pool.imageVersion },
    {
      header: "NEWEST",
      cell: (r) => r.pool.newestImageVersion ?? "up to date",
    },
  ];
  return [
    ...renderTable(control, clusters, style),
    ...(rows.length === 0 ? [] : ["", ...renderTable(pools, rows, style)]),
  ];
}

export const versionsCommand = adminCommand({
  name: "versions",
  summary: "show what each cluster runs and the upgrades it can take",
  description:
    "Per cluster: the control plane's Kubernetes version and the versions it can upgrade to\n" +
    "(newer, at most one minor ahead; LTS and preview marked), then per node pool its image\n" +
    "family, its image and the newest image offered to it. Offers come from the cluster's agent\n" +
    "(docs/agent.md) and from releases published with flotilla release add.",
  options: {
    cluster: {
      type: "string",
      valueName: "C",
      description: "only this cluster",
    },
  },
  prepare: (args) => prepared({ cluster: args.string("cluster") ?? "" }),
  run: async (ctx, request) => {
    const answer = await ctx.hub.call("listClusterVersions", request);
    if (ctx.json) {
      printJson(ctx.io, answer);
      return EXIT_OK;
    }
    if (answer.clusters.length === 0) {
      printLines(ctx.io, ["No clusters."]);
      return EXIT_OK;
    }
    printLines(ctx.io, versionsLines(answer.clusters, ctx.render.style));
    return EXIT_OK;
  },
});
