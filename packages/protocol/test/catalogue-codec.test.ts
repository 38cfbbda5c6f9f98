import { describe, expect, it } from "vitest";
import {
  agentFactsFromWire,
  clusterFactsFromWire,
  clusterFactsToWire,
  loadProtocol,
  MAX_CATALOGUE_KUBERNETES_VERSIONS,
  type ClusterFacts,
  type wire,
} from "@flotilla/protocol";
import type { DecodedFacts } from "@flotilla/protocol";

/** Sends facts on the agent stream with real protobuf and returns what the hub decodes. */
function sent(facts: wire.ClusterFacts): unknown {
  const connect = loadProtocol().agentService.Connect;
  return connect.requestDeserialize(connect.requestSerialize({ facts })).facts;
}

const base: ClusterFacts = {
  labels: { env: "prod" },
  kubernetesVersion: "1.30.5",
  nodePools: [
    {
      name: "system",
      imageFamily: "ubuntu-22.04",
      imageVersion: "202601.01.0",
    },
    { name: "gpu", imageFamily: "ubuntu-gpu", imageVersion: "202601.01.0" },
  ],
  region: "westeurope",
};

function decode(raw: unknown): DecodedFacts {
  const result = agentFactsFromWire(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

describe("the version catalogue in cluster facts", () => {
  it("carries Kubernetes offers with their marks and per-pool images through protobuf", () => {
    const facts: ClusterFacts = {
      ...base,
      catalogue: {
        kubernetes: [
          { version: "1.30.7" },
          { version: "1.31.2", lts: true },
          { version: "1.32.0", preview: true },
        ],
        nodePools: [
          { pool: "system", imageVersions: ["202602.01.0", "202603.01.0"] },
          { pool: "gpu", imageVersions: [] },
        ],
      },
    };
    expect(decode(sent(clusterFactsToWire(facts)))).toEqual({ facts });
  });

  it("tells an agent without a catalogue from one with an empty catalogue", () => {
    expect(
      decode(sent(clusterFactsToWire(base))).facts.catalogue,
    ).toBeUndefined();
    const empty = { ...base, catalogue: { kubernetes: [], nodePools: [] } };
    expect(decode(sent(clusterFactsToWire(empty))).facts.catalogue).toEqual({
      kubernetes: [],
      nodePools: [],
    });
  });

  it("normalizes v-prefixed versions", () => {
    const raw = sent({
      ...clusterFactsToWire(base),
      catalogue: { kubernetes: [{ version: "v1.31.2" }], nodePools: [] },
    });
    expect(decode(raw).facts.catalogue?.kubernetes).toEqual([
      { version: "1.31.2" },
    ]);
  });

  it("refuses a malformed catalogue with field paths, keeping the rest of the facts", () => {
    const raw = sent({
      ...clusterFactsToWire(base),
      catalogue: {
        kubernetes: [{ version: "1.31" }, { version: "latest" }],
        nodePools: [{ pool: "system", imageVersions: ["2026 01"] }],
      },
    });
    const decoded = decode(raw);
    expect(decoded.facts).toEqual(base);
    expect(decoded.refusedCatalogue?.reason).toBe("malformed");
    expect(decoded.refusedCatalogue?.problems).toEqual([
      expect.objectContaining({
        path: "facts.catalogue.kubernetes[0].version",
        value: "1.31",
      }),
      expect.objectContaining({
        path: "facts.catalogue.kubernetes[1].version",
        value: "latest",
      }),
      expect.objectContaining({
        path: "facts.catalogue.nodePools[0].imageVersions[0]",
        value: "2026 01",
      }),
    ]);
    expect(clusterFactsFromWire(raw).ok).toBe(false);
  });

  it("refuses pools the facts do not report, and versions listed twice", () => {
    const decoded = decode(
      sent({
        ...clusterFactsToWire(base),
        catalogue: {
          kubernetes: [{ version: "1.31.2" }, { version: "v1.31.2" }],
          nodePools: [{ pool: "ghost", imageVersions: ["1.0"] }],
        },
      }),
    );
    expect(decoded.refusedCatalogue).toEqual({
      reason: "malformed",
      problems: [
        {
          path: "facts.catalogue.kubernetes[1].version",
          message: "is listed twice",
          value: "1.31.2",
        },
        {
          path: "facts.catalogue.nodePools[0].pool",
          message: "is not a node pool of the cluster",
          value: "ghost",
        },
      ],
    });
  });

  it("refuses an implausible catalogue: 10,000 versions, or a 1 MB version string", () => {
    const many = decode({
      ...clusterFactsToWire(base),
      catalogue: {
        kubernetes: Array.from({ length: 10_000 }, (_, i) => ({
          version: `1.${String(i)}.0`,
        })),
        nodePools: [],
      },
    });
    expect(many.refusedCatalogue).toEqual({
      reason: "implausible",
      problems: [
        expect.objectContaining({
          path: "facts.catalogue.kubernetes",
          message: `must have at most ${String(MAX_CATALOGUE_KUBERNETES_VERSIONS)} versions`,
        }),
      ],
    });
    const huge = decode({
      ...clusterFactsToWire(base),
      catalogue: {
        kubernetes: [],
        nodePools: [{ pool: "system", imageVersions: ["1".repeat(1 << 20)] }],
      },
    });
    expect(huge.refusedCatalogue?.reason).toBe("implausible");
    expect(huge.refusedCatalogue?.problems).toEqual([
      {
        path: "facts.catalogue.nodePools[0].imageVersions[0]",
        message: "must be at most 100 characters (has 1048576)",
        value: `${"1".repeat(20)}…`,
      },
    ]);
    expect(huge.facts).toEqual(base);
  });

  it("refuses a catalogue that is not an object", () => {
    const decoded = decode({ ...clusterFactsToWire(base), catalogue: "all" });
    expect(decoded.refusedCatalogue?.reason).toBe("malformed");
    expect(decoded.refusedCatalogue?.problems[0]?.path).toBe("facts.catalogue");
  });
});
