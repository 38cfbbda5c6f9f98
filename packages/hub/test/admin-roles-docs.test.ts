/**
 * docs/security.md's roles table says who may call what; admin-roles.ts decides it. This test
 * reads the table and checks that it gives every AdminService method the role the code needs, so
 * that the two cannot drift apart again.
 *
 * How a row is read: "everything" is every method; "ROLE's" is what that role's row allows;
 * backticked names are methods and `Prefix*` every method starting so; names after "except" are
 * taken out again.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ADMIN_METHOD_ROLES } from "../src/security/admin-roles.js";
import { ADMIN_ROLES, type AdminRole } from "../src/security/identity.js";

const METHODS = Object.keys(ADMIN_METHOD_ROLES);

/** The "may call" cell of each row of the table under "### Roles". */
function rolesTable(markdown: string): Map<string, string> {
  const section = markdown.split(/^### Roles$/m)[1]?.split(/^#/m)[0] ?? "";
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = /^\|\s*`(\w+)`\s*\|(.*)\|\s*$/.exec(line);
    if (cells?.[1] !== undefined && cells[2] !== undefined) {
      rows.set(cells[1], cells[2].trim());
    }
  }
  return rows;
}

/** The methods a backticked name or `Prefix*` stands for; throws for a name that is no method. */
function methodsNamed(name: string): string[] {
  const found = name.endsWith("*")
    ? METHODS.filter((m) => m.startsWith(name.slice(0, -1)))
    : METHODS.filter((m) => m === name);
  if (found.length === 0) {
    throw new Error(`docs/security.md names "${name}", which is no method`);
  }
  return found;
}

function backticked(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");
}

/** What each role may call, as the table says. */
function allowedByDocs(rows: Map<string, string>): Map<string, Set<string>> {
  const allowed = new Map<string, Set<string>>();
  const read = (role: string): Set<string> => {
    const known = allowed.get(role);
    if (known !== undefined) return known;
    const cell = rows.get(role);
    if (cell === undefined) throw new Error(`no row for role ${role}`);
    const [granted = "", excepted = ""] = cell.split(/\bexcept\b/);
    const set = new Set<string>();
    if (/^everything\b/.test(granted)) for (const m of METHODS) set.add(m);
    for (const [, other] of granted.matchAll(/\b(\w+)'s\b/g)) {
      for (const m of read(other ?? "")) set.add(m);
    }
    for (const name of backticked(granted)) {
      for (const m of methodsNamed(name)) set.add(m);
    }
    for (const name of backticked(excepted)) {
      for (const m of methodsNamed(name)) set.delete(m);
    }
    allowed.set(role, set);
    return set;
  };
  for (const role of rows.keys()) read(role);
  return allowed;
}

describe("docs/security.md's roles table", () => {
  const markdown = readFileSync(
    new URL("../../../docs/security.md", import.meta.url),
    "utf8",
  );
  const rows = rolesTable(markdown);

  it("has a row for each role, in order from weakest to strongest", () => {
    expect([...rows.keys()]).toEqual([...ADMIN_ROLES]);
  });

  it("gives every AdminService method the weakest role admin-roles.ts lets call it", () => {
    const allowed = allowedByDocs(rows);
    const byDocs: Record<string, AdminRole | "none"> = {};
    for (const method of METHODS) {
      byDocs[method] =
        ADMIN_ROLES.find((role) => allowed.get(role)?.has(method)) ?? "none";
    }
    expect(byDocs).toEqual(ADMIN_METHOD_ROLES);
    // A stronger role may call whatever a weaker one may.
    for (const [weaker, stronger] of [
      ["viewer", "operator"],
      ["operator", "admin"],
    ] as const) {
      for (const method of allowed.get(weaker) ?? []) {
        expect(allowed.get(stronger)?.has(method), method).toBe(true);
      }
    }
  });
});
