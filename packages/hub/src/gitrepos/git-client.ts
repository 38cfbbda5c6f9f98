/**
 * The hub's git client (docs/gitops.md#the-git-client): the real `git` binary, spawned without a
 * shell, in a process group of its own that is killed when an operation outlives its time limit.
 * Two operations: `resolve` (the commit a branch, the default branch or a tag points at, with
 * `git ls-remote`) and `checkout` (one commit, fetched shallow into a fresh temporary directory
 * that `dispose` removes).
 *
 * Credentials never appear on a command line or in a message: a token goes in the environment as
 * an `http.extraHeader` (GIT_CONFIG_COUNT/KEY/VALUE), an SSH key in a 0600 file of the operation's
 * temporary directory used through GIT_SSH_COMMAND. git reads no system or user configuration
 * (GIT_CONFIG_NOSYSTEM, HOME in the temporary directory), never prompts, and speaks only the
 * transports a GitRepo may name (GIT_ALLOW_PROTOCOL).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GitRepoCredentials } from "./gitrepo-service.js";

/** Why a git operation failed. */
export type GitErrorKind =
  | "unreachable"
  | "authentication"
  | "branch_not_found"
  | "revision_not_found"
  | "limit_exceeded"
  | "failed";

/** A failed git operation; `message` is for people and never holds a credential. */
export class GitError extends Error {
  override readonly name = "GitError";
  constructor(
    readonly kind: GitErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** What bounds one operation (hub options `--git-*`, docs/running.md). */
export interface GitLimits {
  /** Each git process is killed (its whole process group) after this long. */
  readonly timeoutMs: number;
  /** Most bytes a fetch may write (the pack) and a checkout may hold (the files). */
  readonly maxBytes: number;
  /** Most files a checkout may hold. */
  readonly maxFiles: number;
}

export const DEFAULT_GIT_LIMITS: GitLimits = {
  timeoutMs: 60_000,
  maxBytes: 256 * 1024 * 1024,
  maxFiles: 10_000,
};

/** A repository and how to authenticate to it. */
export interface GitRemote {
  readonly url: string;
  readonly credentials?: GitRepoCredentials;
}

/** What to follow: a branch, a fixed revision (tag or commit), or neither (the default branch). */
export interface GitRef {
  readonly branch?: string;
  readonly revision?: string;
}

/** A commit checked out; `dispose` removes its directory. */
export interface GitCheckout extends AsyncDisposable {
  readonly dir: string;
  readonly commit: string;
  /** The commit's committer time, in seconds since the epoch. */
  readonly commitTimeSec: number;
  /** With `options.ancestor`: whether the commit descends from it (false after a force push). */
  readonly descends?: boolean;
  dispose(): Promise<void>;
}

/** Options of {@link GitClient.checkout}. */
export interface CheckoutOptions {
  readonly signal?: AbortSignal;
  /**
   * A commit checked out before (its committer time with it): history back to that time is
   * fetched too, to tell whether the new commit descends from it.
   */
  readonly ancestor?: { readonly commit: string; readonly timeSec: number };
}

export interface GitClient {
  /** The commit `ref` points at now; GitError `branch_not_found` when it points nowhere. */
  resolve(
    remote: GitRemote,
    ref: GitRef,
    signal?: AbortSignal,
  ): Promise<string>;
  /** Checks `commit` out into a fresh temporary directory. */
  checkout(
    remote: GitRemote,
    commit: string,
    options?: CheckoutOptions,
  ): Promise<GitCheckout>;
}

export interface GitClientOptions {
  /** The git binary; default `git` on PATH. */
  readonly git?: string;
  readonly limits?: GitLimits;
  /** Where temporary directories go; default the OS's. */
  readonly tmpDir?: string;
}

const COMMIT = /^[0-9a-f]{40}$/;
/** How often a running fetch's directory is measured against `maxBytes`. */
const SIZE_WATCH_MS = 250;

/** Standard error phrases, in git's and its transports' words, and what they mean. */
const STDERR_KINDS: readonly (readonly [RegExp, GitErrorKind])[] = [
  [
    /Authentication failed|could not read Username|could not read Password|HTTP 40[13]|returned error: 40[13]|Permission denied \(publickey|Host key verification failed/i,
    "authentication",
  ],
  [
    /couldn't find remote ref|not our ref|no such remote ref|did not send all necessary objects|unadvertised object/i,
    "revision_not_found",
  ],
  [
    /Could not resolve host|Connection refused|unable to connect|Failed to connect|Connection timed out|does not appear to be a git repository|Could not read from remote repository|not found|No such file or directory|unable to access|remote end hung up/i,
    "unreachable",
  ],
];

/** What git's standard error says: the kind, and the line that says it (else the last line). */
function classify(stderr: string): { kind: GitErrorKind; said: string } {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("hint:"));
  for (const [pattern, kind] of STDERR_KINDS) {
    const line = lines.find((l) => pattern.test(l));
    if (line !== undefined) return { kind, said: line };
  }
  return { kind: "failed", said: lines.at(-1) ?? "" };
}

const SENTENCES: Readonly<Record<GitErrorKind, string>> = {
  unreachable: "the repository cannot be reached",
  authentication: "authentication failed",
  branch_not_found: "branch not found",
  revision_not_found: "revision not found",
  limit_exceeded: "limit exceeded",
  failed: "git failed",
};

/** Bytes and files under `dir` (symbolic links counted, never followed). */
async function measure(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  const walk = async (path: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return; // git renames and removes files while it works
    }
    for (const e of entries) {
      const full = join(path, e.name);
      if (e.isDirectory()) await walk(full);
      else {
        files += 1;
        try {
          bytes += (await stat(full)).size;
        } catch {
          // removed meanwhile
        }
      }
    }
  };
  await walk(dir);
  return { bytes, files };
}

/** One operation's private directory: HOME, the SSH key and known hosts, the checkout. */
interface Workspace {
  readonly root: string;
  readonly env: Record<string, string>;
}

async function workspace(
  base: string,
  credentials: GitRepoCredentials | undefined,
): Promise<Workspace> {
  const root = await mkdtemp(join(base, "flotilla-git-"));
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: root,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    GIT_ALLOW_PROTOCOL: "file:git:http:https:ssh",
    LC_ALL: "C",
  };
  if (credentials?.kind === "token") {
    const basic = Buffer.from(
      `${credentials.username ?? "x-access-token"}:${credentials.token}`,
    ).toString("base64");
    Object.assign(env, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.extraHeader",
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
  } else if (credentials?.kind === "ssh") {
    const key = join(root, "id");
    const knownHosts = join(root, "known_hosts");
    const pem = credentials.privateKey.endsWith("\n")
      ? credentials.privateKey
      : `${credentials.privateKey}\n`;
    await writeFile(key, pem, { mode: 0o600 });
    await writeFile(knownHosts, credentials.knownHosts ?? "", { mode: 0o600 });
    const strict = credentials.knownHosts === undefined ? "accept-new" : "yes";
    env["GIT_SSH_COMMAND"] = [
      "ssh",
      `-i '${key}'`,
      "-o IdentitiesOnly=yes",
      "-o BatchMode=yes",
      `-o UserKnownHostsFile='${knownHosts}'`,
      `-o StrictHostKeyChecking=${strict}`,
      "-F /dev/null",
    ].join(" ");
  }
  return { root, env };
}

/** A git client over the `git` binary. */
export function createGitClient(options: GitClientOptions = {}): GitClient {
  const git = options.git ?? "git";
  const limits = options.limits ?? DEFAULT_GIT_LIMITS;
  const base = options.tmpDir ?? tmpdir();

  /**
   * Runs git to completion in its own process group; rejects with a GitError. `watch`, when
   * given, is measured every {@link SIZE_WATCH_MS} and stops git when over `maxBytes`.
   */
  const run = (
    ws: Workspace,
    args: readonly string[],
    what: string,
    signal: AbortSignal | undefined,
    watch?: string,
  ): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(git, [...args], {
        cwd: ws.root,
        env: ws.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let stopped: GitError | undefined;
      const stop = (error: GitError): void => {
        stopped ??= error;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      };
      child.stdout.on("data", (c: Buffer) => out.push(c));
      child.stderr.on("data", (c: Buffer) => err.push(c));
      const timer = setTimeout(() => {
        stop(
          new GitError(
            "limit_exceeded",
            `${what}: time limit exceeded: git did not finish within ${String(limits.timeoutMs)} ms (--git-timeout)`,
          ),
        );
      }, limits.timeoutMs);
      let measuring = false;
      const watcher =
        watch === undefined
          ? undefined
          : setInterval(() => {
              if (measuring) return;
              measuring = true;
              void measure(watch).then(({ bytes }) => {
                measuring = false;
                if (bytes > limits.maxBytes)
                  stop(
                    new GitError(
                      "limit_exceeded",
                      `${what}: size limit exceeded: the fetch wrote more than ${String(limits.maxBytes)} bytes (--git-max-bytes)`,
                    ),
                  );
              });
            }, SIZE_WATCH_MS);
      const onAbort = (): void => {
        stop(new GitError("failed", `${what}: aborted`));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const finish = (): void => {
        clearTimeout(timer);
        if (watcher !== undefined) clearInterval(watcher);
        signal?.removeEventListener("abort", onAbort);
      };
      child.on("error", (error) => {
        finish();
        reject(
          new GitError(
            "failed",
            `${what}: cannot run ${git}: ${error.message}`,
          ),
        );
      });
      child.on("close", (code) => {
        finish();
        if (stopped !== undefined) {
          reject(stopped);
          return;
        }
        const stderr = Buffer.concat(err).toString("utf8");
        if (code === 0) {
          resolve(Buffer.concat(out).toString("utf8"));
          return;
        }
        const { kind, said } = classify(stderr);
        reject(
          new GitError(
            kind,
            `${what}: ${SENTENCES[kind]}${said === "" ? "" : ` (git: ${said})`}`,
          ),
        );
      });
    });

  const withWorkspace = async <T>(
    remote: GitRemote,
    body: (ws: Workspace) => Promise<T>,
  ): Promise<T> => {
    const ws = await workspace(base, remote.credentials);
    try {
      return await body(ws);
    } finally {
      await rm(ws.root, { recursive: true, force: true });
    }
  };

  const resolve = (
    remote: GitRemote,
    ref: GitRef,
    signal?: AbortSignal,
  ): Promise<string> =>
    withWorkspace(remote, async (ws) => {
      if (ref.revision !== undefined && COMMIT.test(ref.revision))
        return ref.revision;
      const wanted =
        ref.revision !== undefined
          ? [`refs/tags/${ref.revision}`, `refs/tags/${ref.revision}^{}`]
          : ref.branch !== undefined
            ? [`refs/heads/${ref.branch}`]
            : ["HEAD"];
      const what = `git ls-remote ${remote.url}`;
      const out = await run(
        ws,
        ["ls-remote", "--", remote.url, ...wanted],
        what,
        signal,
      );
      const found = new Map<string, string>();
      for (const line of out.split("\n")) {
        const [sha, name] = line.split("\t");
        if (sha !== undefined && name !== undefined && COMMIT.test(sha))
          found.set(name, sha);
      }
      // A tag's peeled entry (^{}) is the commit an annotated tag names.
      const commit = found.get(wanted[1] ?? "") ?? found.get(wanted[0] ?? "");
      if (commit !== undefined) return commit;
      if (ref.revision !== undefined)
        throw new GitError(
          "revision_not_found",
          `${what}: revision not found: no tag ${ref.revision} (give a tag or a full 40-hex commit)`,
        );
      throw new GitError(
        "branch_not_found",
        ref.branch === undefined
          ? `${what}: branch not found: the repository has no default branch (HEAD)`
          : `${what}: branch not found: ${ref.branch}`,
      );
    });

  const checkout = async (
    remote: GitRemote,
    commit: string,
    options: CheckoutOptions = {},
  ): Promise<GitCheckout> => {
    const { signal, ancestor } = options;
    if (!COMMIT.test(commit))
      throw new GitError(
        "revision_not_found",
        `checkout: revision not found: ${commit} is not a 40-hex commit`,
      );
    const ws = await workspace(base, remote.credentials);
    const dir = join(ws.root, "tree");
    const dispose = (): Promise<void> =>
      rm(ws.root, { recursive: true, force: true });
    try {
      const what = `git fetch ${remote.url} ${commit}`;
      const inDir = (args: readonly string[]): string[] => ["-C", dir, ...args];
      await run(ws, ["init", "-q", dir], "git init", signal);
      const fetch = (depth: string): Promise<string> =>
        run(
          ws,
          inDir([
            "fetch",
            "-q",
            depth,
            "--no-tags",
            "--no-recurse-submodules",
            "--",
            remote.url,
            commit,
          ]),
          what,
          signal,
          dir,
        );
      let descends: boolean | undefined;
      if (ancestor === undefined) await fetch("--depth=1");
      else {
        // History since the earlier commit (a second earlier: commits of the same second count).
        try {
          await fetch(`--shallow-since=${String(ancestor.timeSec - 1)}`);
        } catch (error) {
          // No commit of the new history is that recent, so it cannot hold the earlier one. Git
          // servers do not always say so (git:// and HTTP only hang up): a fetch of the commit
          // alone that works tells it apart from a real failure, which it repeats.
          if (
            !(error instanceof GitError) ||
            error.kind === "limit_exceeded" ||
            error.kind === "authentication"
          )
            throw error;
          await fetch("--depth=1");
          descends = false;
        }
        descends ??= await run(
          ws,
          inDir(["merge-base", "--is-ancestor", ancestor.commit, "FETCH_HEAD"]),
          "git merge-base",
          signal,
        ).then(
          () => true,
          () => false,
        );
      }
      const commitTimeSec = Number(
        await run(
          ws,
          inDir(["log", "-1", "--format=%ct", "FETCH_HEAD"]),
          "git log",
          signal,
        ),
      );
      // Count before writing anything: the tree's files and their sizes, from the fetched objects.
      const tree = await run(
        ws,
        inDir(["ls-tree", "-r", "-l", "-z", "FETCH_HEAD"]),
        "git ls-tree",
        signal,
      );
      let files = 0;
      let bytes = 0;
      for (const entry of tree.split("\0")) {
        if (entry === "") continue;
        files += 1;
        const size = Number(entry.split(/\s+/)[3]);
        if (Number.isFinite(size)) bytes += size;
      }
      if (files > limits.maxFiles)
        throw new GitError(
          "limit_exceeded",
          `checkout ${commit}: file limit exceeded: the commit has ${String(files)} files, more than ${String(limits.maxFiles)} (--git-max-files)`,
        );
      if (bytes > limits.maxBytes)
        throw new GitError(
          "limit_exceeded",
          `checkout ${commit}: size limit exceeded: the commit's files hold ${String(bytes)} bytes, more than ${String(limits.maxBytes)} (--git-max-bytes)`,
        );
      await run(
        ws,
        inDir([
          "-c",
          "advice.detachedHead=false",
          "checkout",
          "-q",
          "--detach",
          "FETCH_HEAD",
        ]),
        "git checkout",
        signal,
      );
      return {
        dir,
        commit,
        commitTimeSec,
        ...(descends === undefined ? {} : { descends }),
        dispose,
        [Symbol.asyncDispose]: dispose,
      };
    } catch (error) {
      await dispose();
      throw error;
    }
  };

  return { resolve, checkout };
}
