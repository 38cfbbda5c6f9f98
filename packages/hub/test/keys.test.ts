import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  bucketName,
  bundleRevisionKey,
  bundleRevisionsPrefix,
  decodeKeyToken,
  encodeKeyToken,
  gateDecisionKey,
  keyProblem,
  nameKey,
} from "@flotilla/hub";

describe("key tokens", () => {
  test("any string encodes to a valid single-token key and decodes back", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        const token = encodeKeyToken(text);
        expect(keyProblem(token)).toBeUndefined();
        expect(token).not.toContain(".");
        expect(decodeKeyToken(token)).toBe(text);
      }),
    );
  });

  test("DNS labels are keys as they are; dots, escapes and other characters are escaped", () => {
    expect(nameKey("prod-eu-1")).toBe("prod-eu-1");
    expect(encodeKeyToken("a.b")).toBe("a=2Eb");
    expect(encodeKeyToken("x=y")).toBe("x=3Dy");
    expect(encodeKeyToken("é")).toBe("=C3=A9");
    expect(encodeKeyToken("")).toBe("=");
  });
});

describe("keys of the hub's collections", () => {
  test("bucket names join the prefix and the collection", () => {
    expect(bucketName("flotilla", "bundle-revisions")).toBe(
      "flotilla-bundle-revisions",
    );
  });

  test("bundle revision keys sort in revision order under the bundle's prefix", () => {
    const keys = [10, 9, 100, 1].map((r) => bundleRevisionKey("web.app", r));
    expect(keys.toSorted()).toEqual(
      [1, 9, 10, 100].map((r) => bundleRevisionKey("web.app", r)),
    );
    for (const key of keys) {
      expect(keyProblem(key)).toBeUndefined();
      expect(key.startsWith(bundleRevisionsPrefix("web.app"))).toBe(true);
    }
    expect(bundleRevisionKey("web.app", 7)).toBe("web=2Eapp.0000000007");
  });

  test("gate decision keys are run then gate", () => {
    expect(gateDecisionKey("upgrade-1.31", "after canary")).toBe(
      "upgrade-1=2E31.after=20canary",
    );
  });
});
