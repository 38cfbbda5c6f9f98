import { describe, expect, it } from "vitest";
import { parseBundleSpec } from "../src/fleet/bundle-spec.js";
import {
  bundleTargets,
  matchesTarget,
  targetDecision,
} from "../src/fleet/bundle-targets.js";
import { DISPLAY_NAME_LABEL } from "../src/fleet/partitions.js";
import { cluster, fleetOf, group } from "./fleet-fixtures.js";

function targetsOf(
  raw: unknown,
  clusters = FLEET,
  groups = GROUPS,
): [string, number | undefined, string][] {
  const parsed = parseBundleSpec(raw, "bundle");
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return bundleTargets(parsed.value, clusters, groups).map((t) => [
    t.cluster.name,
    t.customization,
    t.namespace,
  ]);
}

const names = (raw: unknown, clusters = FLEET, groups = GROUPS): string[] =>
  targetsOf(raw, clusters, groups).map(([n]) => n);

// The seed's labels (env: staging / prod), plus regions and two cluster groups.
const FLEET = [
  cluster("prod-eu-1", { env: "prod", region: "eu-west" }),
  cluster("prod-us-1", { env: "prod", region: "us-east" }),
  cluster("prod-us-2", { env: "prod", region: "us-east", tier: "legacy" }),
  cluster("staging-1", { env: "staging", region: "eu-west" }),
  cluster("dev-1", { env: "dev" }, ["sandbox"]),
];
const GROUPS = [
  group("eu", { geo: "europe" }, { matchLabels: { region: "eu-west" } }),
  group("legacy", { tier: "legacy" }, { matchLabels: { tier: "legacy" } }),
  group("sandbox", { geo: "lab" }),
];

describe("bundleTargets", () => {
  it("targets a cluster that matches any entry, sorted by name in byte order", () => {
    const raw = {
      targets: [
        { clusterSelector: { matchLabels: { env: "staging" } } },
        { clusterSelector: { matchLabels: { env: "prod" } } },
      ],
    };
    expect(names(raw)).toEqual([
      "prod-eu-1",
      "prod-us-1",
      "prod-us-2",
      "staging-1",
    ]);
    const numbered = fleetOf(12);
    expect(
      names({ targets: [{ clusterSelector: {} }] }, numbered, []).slice(0, 3),
    ).toEqual(["c-000", "c-001", "c-002"]);
  });

  it("requires every criterion of one entry (clusterSelector AND clusterGroup)", () => {
    expect(
      names({
        targets: [
          {
            clusterSelector: { matchLabels: { env: "prod" } },
            clusterGroup: "eu",
          },
        ],
      }),
    ).toEqual(["prod-eu-1"]);
  });

  it("matches clusterGroupSelector against the labels of any group the cluster is in", () => {
    expect(
      names({
        targets: [{ clusterGroupSelector: { matchLabels: { geo: "europe" } } }],
      }),
    ).toEqual(["prod-eu-1", "staging-1"]);
    // Explicit membership (groups listed on the cluster) counts too.
    expect(names({ targets: [{ clusterGroup: "sandbox" }] })).toEqual([
      "dev-1",
    ]);
    // A cluster in no group never matches a group criterion.
    expect(
      names({ targets: [{ clusterGroupSelector: {} }] }).includes("prod-us-1"),
    ).toBe(false);
  });

  it("accepts the string selector form as well as the struct", () => {
    expect(
      names({ targets: [{ clusterSelector: "env=prod,region!=eu-west" }] }),
    ).toEqual(["prod-us-1", "prod-us-2"]);
  });

  it("matches clusterName against the name or Fleet's display-name label", () => {
    const named = [
      cluster("c-7f3a", { [DISPLAY_NAME_LABEL]: "shop-eu" }),
      cluster("shop-us", {}),
    ];
    expect(
      names(
        { targets: [{ clusterName: "shop-eu" }, { clusterName: "shop-us" }] },
        named,
        [],
      ),
    ).toEqual(["c-7f3a", "shop-us"]);
  });

  it("an empty selector selects every cluster; an entry with no criteria selects none", () => {
    expect(names({ targets: [{ clusterSelector: {} }] })).toHaveLength(5);
    expect(names({ targets: [{ name: "everything?" }] })).toEqual([]);
  });

  it("no targets means no clusters", () => {
    expect(names({})).toEqual([]);
    expect(names({ targets: [] })).toEqual([]);
  });

  it("gives each cluster the first customization it matches and its namespace", () => {
    const raw = {
      defaultNamespace: "web",
      targets: [{ clusterSelector: {} }],
      targetCustomizations: [
        { name: "eu", clusterGroup: "eu", defaultNamespace: "web-eu" },
        {
          name: "prod",
          clusterSelector: { matchLabels: { env: "prod" } },
          defaultNamespace: "web-prod",
        },
        { name: "lab", clusterName: "dev-1" },
      ],
    };
    expect(targetsOf(raw)).toEqual([
      ["dev-1", 2, "web"],
      // prod-eu-1 matches "eu" and "prod": the first one wins.
      ["prod-eu-1", 0, "web-eu"],
      ["prod-us-1", 1, "web-prod"],
      ["prod-us-2", 1, "web-prod"],
      ["staging-1", 0, "web-eu"],
    ]);
  });

  it("gives each cluster the customization's namespace (Fleet's target namespace), else the bundle's", () => {
    const parsed = parseBundleSpec(
      {
        namespace: "web",
        defaultNamespace: "apps",
        targets: [{ clusterSelector: {} }],
        targetCustomizations: [{ clusterGroup: "eu", namespace: "web-eu" }],
      },
      "bundle",
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const byCluster = bundleTargets(parsed.value, FLEET, GROUPS).map((t) => [
      t.cluster.name,
      t.namespace,
      t.targetNamespace,
    ]);
    expect(byCluster).toContainEqual(["prod-eu-1", "apps", "web-eu"]);
    expect(byCluster).toContainEqual(["prod-us-1", "apps", "web"]);
  });

  it("doNotDeploy on the first matching customization excludes the cluster", () => {
    const raw = {
      targets: [{ clusterSelector: { matchLabels: { env: "prod" } } }],
      targetCustomizations: [
        { clusterGroup: "legacy", doNotDeploy: true },
        { clusterSelector: "env=prod", namespace: "p" },
      ],
    };
    expect(names(raw)).toEqual(["prod-eu-1", "prod-us-1"]);
    // A later doNotDeploy does not override an earlier match: first match wins, as in Fleet.
    const later = {
      targets: [{ clusterSelector: { matchLabels: { env: "prod" } } }],
      targetCustomizations: [
        { clusterSelector: "env=prod", namespace: "p" },
        { clusterGroup: "legacy", doNotDeploy: true },
      ],
    };
    expect(names(later)).toEqual(["prod-eu-1", "prod-us-1", "prod-us-2"]);
  });

  it("doNotDeploy on the first matching target entry excludes the cluster", () => {
    const raw = {
      targets: [
        {
          name: "no-staging",
          clusterSelector: "env=staging",
          doNotDeploy: true,
        },
        { name: "all", clusterSelector: {} },
      ],
    };
    expect(names(raw)).toEqual([
      "dev-1",
      "prod-eu-1",
      "prod-us-1",
      "prod-us-2",
    ]);
  });
});

describe("matchesTarget", () => {
  it("is the partition matcher: all set criteria, none set matches nothing", () => {
    const c = cluster("a", { env: "prod" });
    expect(matchesTarget({ doNotDeploy: false }, c, [])).toBe(false);
    expect(matchesTarget({ clusterName: "a", doNotDeploy: false }, c, [])).toBe(
      true,
    );
    expect(
      matchesTarget(
        { clusterName: "a", clusterGroup: "eu", doNotDeploy: false },
        c,
        [],
      ),
    ).toBe(false);
  });
});

describe("targetDecision", () => {
  const decide = (raw: unknown, name: string) => {
    const parsed = parseBundleSpec(raw, "bundle");
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const found = FLEET.find((c) => c.name === name);
    if (found === undefined) throw new Error(name);
    return targetDecision(parsed.value, found, GROUPS);
  };
  const raw = {
    defaultNamespace: "app",
    targets: [
      { clusterSelector: { matchLabels: { env: "dev" } }, doNotDeploy: true },
      {
        clusterSelector: {
          matchExpressions: [{ key: "env", operator: "Exists" }],
        },
      },
    ],
    targetCustomizations: [
      { name: "legacy", clusterGroup: "legacy", doNotDeploy: true },
      {
        name: "us",
        clusterSelector: { matchLabels: { region: "us-east" } },
        defaultNamespace: "app-us",
      },
    ],
  };

  it("gives the target with its customization, as bundleTargets does", () => {
    expect(decide(raw, "prod-us-1").target).toMatchObject({
      customization: 1,
      namespace: "app-us",
      targetNamespace: "",
    });
    expect(decide(raw, "prod-eu-1").target).toMatchObject({ namespace: "app" });
  });

  it("says which entry keeps a cluster out, or that none matches", () => {
    expect(decide(raw, "dev-1")).toEqual({
      notTargeted:
        "the first entry of targets it matches (targets[0]) sets doNotDeploy",
    });
    expect(decide(raw, "prod-us-2")).toEqual({
      notTargeted:
        "the target customization it matches (targetCustomizations[0]) sets doNotDeploy",
    });
    expect(
      decide({ ...raw, targets: [{ clusterName: "elsewhere" }] }, "dev-1"),
    ).toEqual({
      notTargeted: "no entry of targets matches it",
    });
  });
});
