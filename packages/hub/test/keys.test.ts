import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  bucketName,
  bundleRevisionKey,
  bundleRevisionsPrefix,
  decodeKeyToken,
  encodeKeyToken,
  gateDecisionKey,
  isRunJournalKey,
  keyProblem,
  nameKey,
  runHeadKey,
  runJournalKey,
  runRecordsPrefix,
  runSnapshotPartKey,
} from "@flotilla/hub/testing";

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

  test("a run's head, journal slots and snapshot parts are valid keys, all but the head under its prefix", () => {
    const name = "upgrade-1.31";
    const journal = runJournalKey(name, 511);
    const part = runSnapshotPartKey(name, "b", 3);
    for (const key of [runHeadKey(name), journal, part]) {
      expect(keyProblem(key)).toBeUndefined();
    }
    expect(runHeadKey(name)).toBe("upgrade-1=2E31");
    expect(journal).toBe("upgrade-1=2E31.j.511");
    expect(part).toBe("upgrade-1=2E31.p.b.3");
    expect(journal.startsWith(runRecordsPrefix(name))).toBe(true);
    expect(part.startsWith(runRecordsPrefix(name))).toBe(true);
    expect(runHeadKey(name).startsWith(runRecordsPrefix(name))).toBe(false);
    expect(isRunJournalKey(name, journal)).toBe(true);
    expect(isRunJournalKey(name, part)).toBe(false);
    // Another run whose name starts the same is not this run's.
    expect(isRunJournalKey("upgrade", journal)).toBe(false);
  });

  test("gate decision keys are run then gate", () => {
    expect(gateDecisionKey("upgrade-1.31", "after canary")).toBe(
      "upgrade-1=2E31.after=20canary",
    );
  });
});
