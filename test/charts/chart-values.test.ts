/**
 * Rules of each chart's values.schema.json beyond types: choices that exclude each other (a token
 * inline or from a Secret, not both; one disruption limit), values one setting needs from another
 * (the Cluster API driver needs the Cluster's name), closed vocabularies (RBAC modes and verbs,
 * roles, maintenance scopes), and maintenance windows in the examples that core's own parser
 * accepts. The checks every chart shares are in charts.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { parseMaintenance } from "@flotilla/core";
import { isObject, mergeValues, readChart } from "./chart-files.js";
import { valuesChecker } from "./chart-schema.js";

describe("flotilla-agent values", () => {
  const chart = readChart("flotilla-agent");
  const check = valuesChecker(chart);

  it("refuses a token given both inline and as an existing Secret", () => {
    expect(
      check({ bootstrapToken: { value: "t", existingSecret: "s" } }),
    ).toContain(
      "/bootstrapToken/existingSecret: must NOT have more than 0 characters",
    );
  });

  it("refuses the cluster-api driver without the Cluster's name", () => {
    expect(check({ upgradeDriver: { type: "cluster-api" } })).toContain(
      "/upgradeDriver/clusterApi/clusterName: must NOT have fewer than 1 characters",
    );
    expect(
      check({
        upgradeDriver: {
          type: "cluster-api",
          clusterApi: { clusterName: "w1" },
        },
      }),
    ).toEqual([]);
  });

  it("refuses unknown RBAC modes, verbs and maintenance scopes", () => {
    expect(check({ rbac: { mode: "admin" } })).toContain(
      "/rbac/mode: must be equal to one of the allowed values",
    );
    const rule = {
      apiGroups: ["apps"],
      resources: ["deployments"],
      verbs: ["escalate"],
    };
    expect(
      check({ rbac: { leastPrivilege: { resources: [rule] } } }),
    ).toContain(
      "/rbac/leastPrivilege/resources/0/verbs/0: must be equal to one of the allowed values",
    );
    expect(
      check({ maintenanceWindows: { maintenance: { network: {} } } }),
    ).toContain("/maintenanceWindows/maintenance: property name must be valid");
  });

  it("takes several hub addresses, each HOST:PORT and none twice, rendered into FLOTILLA_HUB over hub.address", () => {
    const hubs = { addresses: ["hub-a.example:7070", "[fd00::1]:7070"] };
    expect(check({ hub: hubs })).toEqual([]);
    expect(check({ hub: { addresses: ["hub-a", "b:1"] } })[0]).toMatch(
      /^\/hub\/addresses\/0: must match pattern/,
    );
    expect(check({ hub: { addresses: ["b:1", "b:1"] } })).toContain(
      "/hub/addresses: must NOT have duplicate items (items ## 1 and 0 are identical)",
    );
    expect(chart.values.hub).toMatchObject({ address: "", addresses: [] });
    // No helm here to render: the variable comes from the one helper, which prefers the list.
    const deployment = chart.templates.get("deployment.yaml") ?? "";
    expect(deployment).toMatch(
      /- name: FLOTILLA_HUB\n\s+value: \{\{ include "flotilla-agent\.hubAddresses" \. \| quote \}\}/,
    );
    const helpers = chart.templates.get("_helpers.tpl") ?? "";
    expect(helpers).toContain(
      [
        '{{- define "flotilla-agent.hubAddresses" -}}',
        "{{- if .Values.hub.addresses -}}",
        '{{- join "," .Values.hub.addresses -}}',
        "{{- else -}}",
        "{{- .Values.hub.address -}}",
      ].join("\n"),
    );
    expect(chart.examples.get("several-hubs.yaml")).toMatchObject({
      hub: { addresses: expect.arrayContaining([expect.any(String)]) },
    });
  });

  it("refuses a simulated cluster file that sets what the chart sets", () => {
    expect(
      check({ backend: { simulated: { cluster: { name: "x" } } } }),
    ).toContain("/backend/simulated/cluster: property name must be valid");
  });

  it("has maintenance windows in its examples that core's parser accepts", () => {
    const blocks = [...chart.examples].flatMap(([file, example]) => {
      const windows = mergeValues(chart.values, example).maintenanceWindows;
      const block = isObject(windows) ? windows.maintenance : undefined;
      return isObject(block) && Object.keys(block).length > 0
        ? [[file, block] as const]
        : [];
    });
    expect(blocks.length).toBeGreaterThan(0);
    for (const [file, block] of blocks)
      expect(parseMaintenance(block).ok, file).toBe(true);
    expect(parseMaintenance({ kubernetes: { startTime: "25:00" } }).ok).toBe(
      false,
    );
  });
});

describe("flotilla-hub values", () => {
  const chart = readChart("flotilla-hub");
  const check = valuesChecker(chart);

  it("refuses a disruption budget with both limits, and accepts minAvailable alone", () => {
    expect(check({ podDisruptionBudget: { minAvailable: 1 } })).toContain(
      "/podDisruptionBudget: must NOT be valid",
    );
    expect(
      check({
        podDisruptionBudget: { maxUnavailable: null, minAvailable: "50%" },
      }),
    ).toEqual([]);
    expect(
      check({ podDisruptionBudget: { maxUnavailable: "half" } })[0],
    ).toMatch(/^\/podDisruptionBudget\/maxUnavailable: must match pattern/);
  });

  it("takes a Prometheus URL without credentials, and a bearer token Secret only with a URL", () => {
    const secret = { name: "prometheus-token", key: "token" };
    expect(
      check({
        prometheus: {
          url: "https://mon.example/prometheus",
          bearerTokenSecret: secret,
          timeout: "30s",
          maxBytes: "4MiB",
        },
      }),
    ).toEqual([]);
    expect(
      check({ prometheus: { url: "http://admin:pw@prometheus:9090" } })[0],
    ).toMatch(/^\/prometheus\/url: must match pattern/);
    expect(
      check({ prometheus: { url: "http://prometheus:9090/?org=1" } })[0],
    ).toMatch(/^\/prometheus\/url: must match pattern/);
    expect(check({ prometheus: { bearerTokenSecret: secret } })).toContain(
      "/prometheus/url: must NOT have fewer than 1 characters",
    );
    expect(check({ prometheus: { timeout: "soon" } })[0]).toMatch(
      /^\/prometheus\/timeout: must match pattern/,
    );
    expect(check({ prometheus: { maxBytes: "1GB" } })[0]).toMatch(
      /^\/prometheus\/maxBytes: must match pattern/,
    );
  });

  it("takes replicas, JetStream replicas and anti-affinity in range only", () => {
    expect(
      check({
        replicaCount: 3,
        jetstream: { replicas: 3 },
        podAntiAffinity: {
          mode: "required",
          topologyKeys: ["kubernetes.io/hostname"],
        },
      }),
    ).toEqual([]);
    expect(check({ replicaCount: 0 })).toContain("/replicaCount: must be >= 1");
    expect(check({ jetstream: { replicas: 6 } })).toContain(
      "/jetstream/replicas: must be <= 5",
    );
    expect(check({ jetstream: { replicas: "3" } })).toContain(
      "/jetstream/replicas: must be integer",
    );
    expect(check({ podAntiAffinity: { mode: "strict" } })).toContain(
      "/podAntiAffinity/mode: must be equal to one of the allowed values",
    );
    expect(
      check({ podAntiAffinity: { topologyKeys: ["not a key"] } })[0],
    ).toMatch(/^\/podAntiAffinity\/topologyKeys\/0: must match pattern/);
  });

  it("takes the NATS servers as a list, or as one string in the older url", () => {
    expect(
      check({ nats: { urls: ["nats://a:4222", "tls://b:4222"] } }),
    ).toEqual([]);
    expect(
      check({ nats: { url: "nats://a:4222,nats://b:4222", urls: [] } }),
    ).toEqual([]);
    expect(check({ nats: { urls: [] } })).toContain(
      "/nats/urls: must NOT have fewer than 1 items",
    );
    expect(
      check({ nats: { urls: ["nats://a:4222,nats://b:4222"] } })[0],
    ).toMatch(/^\/nats\/urls\/0: must match pattern/);
    expect(check({ nats: { urls: ["http://a:4222"] } })[0]).toMatch(
      /^\/nats\/urls\/0: must match pattern/,
    );
  });

  it("accepts values-ha.yaml merged over the defaults", () => {
    const ha = parseYaml(
      readFileSync(join(chart.dir, "values-ha.yaml"), "utf8"),
    ) as Record<string, unknown>;
    expect(check(ha)).toEqual([]);
    expect(ha).toMatchObject({ replicaCount: 3, jetstream: { replicas: 3 } });
  });

  it("refuses admin tokens in clear, with unknown roles, or beside an existing Secret", () => {
    const token = { name: "bob", role: "root", tokenSha256: "secret" };
    const errors = check({ adminTokens: { tokens: [token] } });
    expect(errors).toContain(
      "/adminTokens/tokens/0/role: must be equal to one of the allowed values",
    );
    expect(errors).toContain(
      '/adminTokens/tokens/0/tokenSha256: must match pattern "^[0-9a-f]{64}$"',
    );
    const good = { name: "bob", role: "viewer", tokenSha256: "a".repeat(64) };
    expect(
      check({ adminTokens: { existingSecret: "t", tokens: [good] } }),
    ).toContain("/adminTokens/tokens: must NOT have more than 0 items");
  });

  it("refuses ports, durations and heartbeats out of range", () => {
    expect(check({ service: { grpcPort: 70000 } })).toContain(
      "/service/grpcPort: must be <= 65535",
    );
    expect(check({ passInterval: "5 seconds" })[0]).toMatch(
      /^\/passInterval: must match pattern/,
    );
    expect(check({ missedHeartbeats: 0 })).toContain(
      "/missedHeartbeats: must be >= 1",
    );
    expect(check({ shutdownTimeout: "10" })[0]).toMatch(
      /^\/shutdownTimeout: must match pattern/,
    );
    expect(check({ bundleContentGc: { grace: "an hour" } })[0]).toMatch(
      /^\/bundleContentGc\/grace: must match pattern/,
    );
  });

  it("takes the audit stream's size as a string of bytes or binary units only", () => {
    expect(check({ audit: { maxBytes: "256MiB" } })).toEqual([]);
    expect(check({ audit: { maxBytes: "268435456" } })).toEqual([]);
    expect(check({ audit: { maxBytes: "1GB" } })[0]).toMatch(
      /^\/audit\/maxBytes: must match pattern/,
    );
    // Helm prints a large number as 1.073741824e+09, which the hub would refuse.
    expect(check({ audit: { maxBytes: 1073741824 } })).toContain(
      "/audit/maxBytes: must be string",
    );
  });

  it("refuses an audit refusal limit below zero, a bad window and no room for peers", () => {
    const errors = check({
      auditRefusals: { perPeer: -1, window: "a minute", maxPeers: 0 },
    });
    expect(errors).toContain("/auditRefusals/perPeer: must be >= 0");
    expect(errors).toContain("/auditRefusals/maxPeers: must be >= 1");
    expect(
      errors.some((e) => e.startsWith("/auditRefusals/window: must match")),
    ).toBe(true);
    expect(check({ auditRefusals: { perPeer: 0 } })).toEqual([]);
  });
});
