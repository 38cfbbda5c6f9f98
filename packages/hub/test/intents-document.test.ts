// The wire contract between the hub's publisher and the agents' watchers (@flotilla/protocol):
// names, and the stored document the hub encodes and agents parse.
import { describe, expect, test } from "vitest";
import { canonicalIntentJson, type ClusterIntent } from "@flotilla/core";
import {
  bundleContentBucket,
  deriveContentKey,
  encodeIntentDocument,
  intentKey,
  intentKvSubject,
  intentsBucket,
  intentsBucketSettings,
  intentsStream,
  intentSubject,
  MAX_INTENT_DOCUMENT_BYTES,
  parseIntentDocument,
  sha256Digest,
} from "@flotilla/protocol";
import { intentFor } from "./intents-contract.js";

const utf8 = new TextEncoder();

function problemsOf(bytes: Uint8Array | string, cluster = "web-1"): string[] {
  const result = parseIntentDocument(
    typeof bytes === "string" ? utf8.encode(bytes) : bytes,
    cluster,
  );
  return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
}

describe("intent names", () => {
  test("buckets, key and subjects of the default prefix", () => {
    expect(intentsBucket()).toBe("flotilla-intents");
    expect(intentsStream()).toBe("KV_flotilla-intents");
    expect(bundleContentBucket()).toBe("flotilla-bundle-content");
    expect(intentKey("web-1")).toBe("web-1");
    expect(intentKvSubject("web-1")).toBe("$KV.flotilla-intents.web-1");
    expect(intentSubject("web-1")).toBe("flotilla.intents.web-1");
    expect(intentsBucketSettings("t1")).toEqual({
      bucket: "t1-intents",
      history: 1,
      maxValueSize: MAX_INTENT_DOCUMENT_BYTES + 4096,
      republish: { src: "$KV.t1-intents.>", dest: "t1.intents.>" },
    });
  });

  test("cluster names that are not DNS labels, and bad prefixes, are refused", () => {
    for (const name of [
      "",
      "Web",
      "web.1",
      "web_1",
      "-web",
      "a".repeat(64),
      "*",
    ]) {
      expect(() => intentSubject(name)).toThrow(/DNS label/);
    }
    for (const prefix of ["", "a.b", "a*", "a b"]) {
      expect(() => intentsBucket(prefix)).toThrow(/intents prefix/);
    }
  });

  test("content is sealed with a key derived from a well-formed sha256 digest only", () => {
    const digest = sha256Digest("content");
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const secret = new Uint8Array(32).fill(7);
    for (const bad of ["sha256:abc", digest.toUpperCase(), "md5:00"]) {
      expect(() => deriveContentKey(secret, bad)).toThrow(
        /Invalid bundle content digest/,
      );
    }
  });
});

describe("intent documents", () => {
  test("encoding is deterministic whatever the key order, and parses back", () => {
    const intent = intentFor("web-1", 3);
    const reordered = {
      bundles: intent.bundles,
      generation: 3,
      cluster: "web-1",
      apiVersion: "flotilla.dev/v1",
    } as ClusterIntent;
    const a = encodeIntentDocument(intent);
    const b = encodeIntentDocument(reordered);
    expect(a.bytes).toEqual(b.bytes);
    expect(a.hash).toBe(sha256Digest(canonicalIntentJson(intent)));
    expect(parseIntentDocument(a.bytes, "web-1")).toEqual({
      ok: true,
      value: { intent, hash: a.hash },
    });
  });

  test("every problem of a bad document is reported with its path", () => {
    const good = encodeIntentDocument(intentFor("web-1", 3));
    const json = JSON.parse(new TextDecoder().decode(good.bytes)) as {
      hash: string;
      intent: ClusterIntent;
    };
    expect(problemsOf("nope")[0]).toMatch(/^: is not UTF-8 JSON/);
    expect(problemsOf("[1]")).toEqual([": must be an object"]);
    expect(problemsOf(new Uint8Array([0xff, 0x7b]))[0]).toMatch(/not UTF-8/);
    expect(
      problemsOf(
        JSON.stringify({
          hash: "sha256:x",
          intent: { ...json.intent, generation: 0 },
          extra: 1,
        }),
      ),
    ).toEqual([
      "extra: unknown field (known fields: hash, intent)",
      'hash: must be "sha256:" and 64 lower-case hex digits',
      expect.stringMatching(/^intent\.generation: /),
    ]);
    expect(problemsOf(JSON.stringify({ hash: good.hash }))).toEqual([
      expect.stringMatching(/^intent: /),
    ]);
    expect(problemsOf(good.bytes, "web-2")).toEqual([
      'intent.cluster: must be the cluster of the key, "web-2"',
    ]);
    expect(
      problemsOf(JSON.stringify({ ...json, hash: sha256Digest("other") })),
    ).toEqual([`hash: does not match the intent, whose hash is ${good.hash}`]);
  });

  test("a document over the size limit is refused before it is parsed", () => {
    const bytes = encodeIntentDocument(intentFor("web-1", 1)).bytes;
    const result = parseIntentDocument(bytes, "web-1", bytes.byteLength - 1);
    expect(result).toEqual({
      ok: false,
      problems: [
        {
          path: "",
          message: `is ${String(bytes.byteLength)} bytes, more than the ${String(bytes.byteLength - 1)} allowed`,
        },
      ],
    });
  });
});
