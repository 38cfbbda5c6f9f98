/**
 * A git repository for people (`flotilla gitrepo get|list`, docs/cli.md#git-repositories): what it
 * follows, the commits seen and deployed, the last sync and, prominently, the last error; then a
 * table of the bundles its directories made.
 */
import type { GitRepoView } from "@flotilla/protocol";
import { formatDuration } from "./duration.js";
import type { RenderOptions } from "./options.js";
import { renderTable, type Column } from "./table.js";
import { formatAgo } from "./time.js";

/** A commit as people read it: its first 12 characters. */
export function shortCommit(commit: string | undefined): string {
  return commit === undefined ? "(none yet)" : commit.slice(0, 12);
}

/** What the repository follows: `branch main`, `revision v1.2`, or its default branch. */
export function followWords(repo: GitRepoView): string {
  if (repo.spec.revision !== undefined) return `revision ${repo.spec.revision}`;
  if (repo.spec.branch !== undefined) return `branch ${repo.spec.branch}`;
  return "the default branch";
}

function credentialWords(repo: GitRepoView): string {
  switch (repo.credentials) {
    case "token":
      return "token";
    case "ssh":
      return "SSH key";
    case undefined:
      return "none";
  }
}

/**
 * Whether the repository has settled: the newest commit seen is deployed and every bundle is
 * Ready on all its targets at the revision that commit made.
 */
export function gitRepoSettled(repo: GitRepoView): boolean {
  return (
    repo.commitDeployed !== undefined &&
    repo.commitDeployed === repo.commitSeen &&
    repo.lastError === undefined &&
    repo.bundles.every((b) => b.ready === b.targets)
  );
}

/** The bundles table. */
export function bundleTable(
  repo: GitRepoView,
  options: RenderOptions,
): string[] {
  if (repo.bundles.length === 0) return ["No bundles yet."];
  type Row = GitRepoView["bundles"][number];
  const columns: Column<Row>[] = [
    { header: "PATH", cell: (b) => b.path },
    { header: "BUNDLE", cell: (b) => b.bundle },
    { header: "REVISION", cell: (b) => b.revision },
    {
      header: "READY",
      cell: (b) => {
        const words = `${String(b.ready)}/${String(b.targets)}`;
        return b.ready === b.targets
          ? options.style.green(words)
          : options.style.yellow(words);
      },
    },
    { header: "SUMMARY", cell: (b) => b.summary },
  ];
  return renderTable(columns, repo.bundles, options.style);
}

/** `flotilla gitrepo get`: the repository's fields, its last error, and its bundles. */
export function gitRepoLines(
  repo: GitRepoView,
  options: RenderOptions,
  nowMs: number,
): string[] {
  const { spec } = repo;
  const { style } = options;
  const lines = [
    style.bold(`Git repository ${spec.name}`),
    `  Repository:       ${spec.repo}`,
    `  Follows:          ${followWords(repo)}`,
    `  Paths:            ${spec.paths.join(", ")}`,
    `  Poll interval:    ${formatDuration(spec.pollIntervalSeconds)}`,
    `  Update strategy:  ${spec.updateStrategyName ?? "(none: each bundle's own rollout)"}`,
    `  Delete removed:   ${spec.deleteRemoved ? "yes" : "no"}`,
    `  Credentials:      ${credentialWords(repo)}`,
    `  Commit seen:      ${shortCommit(repo.commitSeen)}`,
    `  Commit deployed:  ${shortCommit(repo.commitDeployed)}${
      repo.commitSeen !== undefined && repo.commitDeployed !== repo.commitSeen
        ? style.yellow(" (behind)")
        : ""
    }`,
    `  Last sync:        ${repo.lastSyncAtMs === undefined ? "(never)" : formatAgo(repo.lastSyncAtMs, nowMs)}`,
  ];
  const error = repo.lastError;
  if (error !== undefined) {
    const where =
      error.commit === undefined
        ? ""
        : ` at commit ${shortCommit(error.commit)}`;
    lines.push(
      "",
      style.red(
        style.bold(`  LAST ERROR (${formatAgo(error.atMs, nowMs)}${where}):`),
      ),
      ...error.message.split("\n").map((line) => style.red(`    ${line}`)),
    );
  }
  lines.push("", ...bundleTable(repo, options));
  return lines;
}

/** `flotilla gitrepo list`: one row per repository. */
export function gitRepoListLines(
  repos: readonly GitRepoView[],
  options: RenderOptions,
  nowMs: number,
): string[] {
  if (repos.length === 0) return ["No git repositories."];
  const columns: Column<GitRepoView>[] = [
    { header: "NAME", cell: (r) => r.spec.name },
    { header: "REPO", cell: (r) => r.spec.repo },
    { header: "FOLLOWS", cell: followWords },
    { header: "DEPLOYED", cell: (r) => shortCommit(r.commitDeployed) },
    {
      header: "BUNDLES READY",
      cell: (r) =>
        `${String(r.bundles.filter((b) => b.ready === b.targets).length)}/${String(r.bundles.length)}`,
    },
    {
      header: "LAST SYNC",
      cell: (r) =>
        r.lastSyncAtMs === undefined ? "-" : formatAgo(r.lastSyncAtMs, nowMs),
    },
    {
      header: "ERROR",
      cell: (r) =>
        r.lastError === undefined
          ? "-"
          : options.style.red(r.lastError.message.split("\n")[0] ?? ""),
    },
  ];
  return renderTable(columns, repos, options.style);
}
