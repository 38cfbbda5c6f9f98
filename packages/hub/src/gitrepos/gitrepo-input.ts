/**
 * Checking a GitRepo's spec and credentials before anything is stored (docs/gitops.md#a-gitrepo):
 * every problem at once, with the field path and the value (credentials are never echoed).
 */
import { compact, type Problem } from "@flotilla/core";
import { nameProblem } from "../names.js";
import type {
  GitRepoCredentials,
  GitRepoInput,
  GitRepoSpec,
} from "./gitrepo-service.js";

/** How often a repository is polled when its spec says nothing (0). */
export const DEFAULT_POLL_INTERVAL_SECONDS = 15;
/** Bounds of `pollIntervalSeconds`. */
export const MIN_POLL_INTERVAL_SECONDS = 5;
export const MAX_POLL_INTERVAL_SECONDS = 24 * 3600;

const URL_SCHEMES = /^(https?|ssh|git|file):\/\/[^\s]+$/;
const SCP_LIKE = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$/;
/** Branch and tag names: git's rules, narrowed to what never reads as an option or a range. */
const REF = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]+(?<![./])$/;
const BAD_PATH_CHARS = /[\\\0\n\r*?[\]]/;

/** Whether the repository URL is an http(s) one (token credentials go with those). */
export const isHttpUrl = (url: string): boolean => /^https?:\/\//.test(url);
/** Whether the repository URL is an SSH one (ssh:// or scp-like). */
export const isSshUrl = (url: string): boolean =>
  url.startsWith("ssh://") || SCP_LIKE.test(url);

function pathProblems(paths: readonly unknown[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  paths.forEach((p, i) => {
    const path = `paths[${String(i)}]`;
    if (typeof p !== "string" || p === "") {
      problems.push({ path, message: "must be a non-empty path", value: p });
      return;
    }
    const parts = p.split("/");
    if (p.startsWith("/"))
      problems.push({
        path,
        message: "must be relative to the repository's top",
        value: p,
      });
    else if (parts.includes(".."))
      problems.push({ path, message: "must not contain ..", value: p });
    else if (BAD_PATH_CHARS.test(p))
      problems.push({
        path,
        message:
          "must be a plain /-separated path (no backslashes, wildcards or control characters)",
        value: p,
      });
    else if (seen.has(normalizePath(p)))
      problems.push({ path, message: "is listed twice", value: p });
    seen.add(normalizePath(p));
  });
  return problems;
}

/** A path as compared and stored: no `./`, no trailing or doubled `/`; "." for the top. */
export function normalizePath(path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  return parts.length === 0 ? "." : parts.join("/");
}

function credentialProblems(
  credentials: GitRepoCredentials,
  repo: string,
): Problem[] {
  const problems: Problem[] = [];
  if (credentials.kind === "token") {
    if (typeof credentials.token !== "string" || credentials.token === "")
      problems.push({ path: "credentials.token", message: "is required" });
    if (
      credentials.username !== undefined &&
      (credentials.username === "" || credentials.username.includes(":"))
    )
      problems.push({
        path: "credentials.username",
        message: "must be non-empty and hold no ':'",
        value: credentials.username,
      });
    if (!isHttpUrl(repo))
      problems.push({
        path: "credentials.kind",
        message:
          "token credentials are sent over HTTP: the repository must be an https:// or http:// URL",
        value: credentials.kind,
      });
  } else {
    if (
      typeof credentials.privateKey !== "string" ||
      !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(credentials.privateKey)
    )
      problems.push({
        path: "credentials.privateKey",
        message:
          "must be a private key in PEM form (-----BEGIN … PRIVATE KEY-----)",
      });
    if (!isSshUrl(repo))
      problems.push({
        path: "credentials.kind",
        message: "SSH keys need an ssh:// or user@host:path repository",
        value: credentials.kind,
      });
  }
  return problems;
}

/**
 * The spec to store for `input`, defaults filled in (paths ["."], poll interval 15 s), or every
 * problem with it.
 */
export function checkGitRepoInput(
  input: GitRepoInput,
):
  | { readonly ok: true; readonly spec: GitRepoSpec }
  | { readonly ok: false; readonly problems: Problem[] } {
  const problems: Problem[] = [];
  const name = nameProblem(input.name, "name");
  if (name !== undefined) problems.push(name);
  const repo: unknown = input.repo;
  if (typeof repo !== "string" || repo === "")
    problems.push({ path: "repo", message: "is required", value: repo });
  else if (!URL_SCHEMES.test(repo) && !SCP_LIKE.test(repo))
    problems.push({
      path: "repo",
      message:
        "must be an https://, http://, ssh://, git:// or file:// URL, or user@host:path",
      value: repo,
    });
  else if (/^[a-z]+:\/\/[^/@]*:[^/@]*@/i.test(repo))
    // Credentials have one place, and it is not the URL (which statuses and logs show).
    problems.push({
      path: "repo",
      message:
        "must not hold a password (user:password@): give credentials instead",
      value: repo.replace(/(:\/\/[^/@]*:)[^/@]*@/, "$1(redacted)@"),
    });
  const branch = input.branch === "" ? undefined : input.branch;
  const revision = input.revision === "" ? undefined : input.revision;
  if (branch !== undefined && revision !== undefined)
    problems.push({
      path: "revision",
      message: "give a branch or a revision, not both",
      value: revision,
    });
  for (const [field, value] of [
    ["branch", branch],
    ["revision", revision],
  ] as const)
    if (value !== undefined && !REF.test(value))
      problems.push({
        path: field,
        message:
          "must be a branch, tag or commit name: letters, digits, '.', '_', '/', '-', not starting with '-'",
        value,
      });
  const rawPaths: readonly unknown[] = Array.isArray(input.paths)
    ? input.paths
    : [];
  problems.push(...pathProblems(rawPaths));
  const poll =
    input.pollIntervalSeconds === 0
      ? DEFAULT_POLL_INTERVAL_SECONDS
      : input.pollIntervalSeconds;
  if (
    !Number.isInteger(poll) ||
    poll < MIN_POLL_INTERVAL_SECONDS ||
    poll > MAX_POLL_INTERVAL_SECONDS
  )
    problems.push({
      path: "pollIntervalSeconds",
      message: `must be a whole number of seconds from ${String(MIN_POLL_INTERVAL_SECONDS)} to ${String(MAX_POLL_INTERVAL_SECONDS)}`,
      value: input.pollIntervalSeconds,
    });
  const strategy =
    input.updateStrategyName === "" ? undefined : input.updateStrategyName;
  if (strategy !== undefined) {
    const bad = nameProblem(strategy, "updateStrategyName");
    if (bad !== undefined) problems.push(bad);
  }
  if (
    input.credentials !== undefined &&
    input.credentials !== null &&
    typeof repo === "string"
  )
    problems.push(...credentialProblems(input.credentials, repo));
  if (problems.length > 0) return { ok: false, problems };
  const paths =
    rawPaths.length === 0
      ? ["."]
      : (rawPaths as string[]).map((p) => normalizePath(p));
  return {
    ok: true,
    spec: {
      name: input.name,
      repo: repo as string,
      ...compact({ branch, revision, updateStrategyName: strategy }),
      paths,
      pollIntervalSeconds: poll,
      deleteRemoved: input.deleteRemoved,
    },
  };
}
