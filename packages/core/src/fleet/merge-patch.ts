/**
 * JSON Merge Patch (RFC 7386), the patch format of per-cluster customizations (customize.ts).
 * A patch that is an object merges into the target key by key: `null` deletes the key, an object
 * merges recursively, anything else (string, number, boolean, array) replaces the value. A patch
 * that is not an object replaces the target whole. Pure: neither argument is changed.
 */

/** A JSON object as merge patches see it. */
type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `target` with `patch` applied (RFC 7386 MergePatch); the inputs are left unchanged. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  // A Map, not an object literal: a "__proto__" key stays a plain key.
  const out = new Map<string, unknown>(
    isObject(target) ? Object.entries(target) : [],
  );
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) out.delete(key);
    else out.set(key, applyMergePatch(out.get(key), value));
  }
  return Object.fromEntries(out);
}
