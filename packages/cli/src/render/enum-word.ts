/**
 * Wire enum names for people: `CONNECTION_STATE_NEVER_CONNECTED` → `NeverConnected`, the spelling
 * the domain and Fleet use (`BUNDLE_CLUSTER_STATE_ERR_APPLIED` → `ErrApplied`).
 */

/** The PascalCase word of `value` after `prefix`; a number (unknown to this client) shows as `?N`. */
export function enumWord(value: string | number, prefix: string): string {
  if (typeof value === "number") return `?${String(value)}`;
  const rest = value.startsWith(prefix) ? value.slice(prefix.length) : value;
  return rest
    .toLowerCase()
    .split("_")
    .filter((w) => w !== "")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

/** The wire name of a PascalCase word: `enumName("ErrApplied", "BUNDLE_CLUSTER_STATE_")`. */
export function enumName(word: string, prefix: string): string {
  return prefix + word.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}
