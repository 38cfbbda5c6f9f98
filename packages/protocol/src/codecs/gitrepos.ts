/**
 * Git repositories on the wire (admin.proto "Git repositories"): requests checked into the input
 * the hub's GitRepo manager takes, and its statuses out (docs/cli.md#git-repositories). The CLI
 * runs the same check before it connects, so a bad flag is refused locally with the same words.
 *
 * Credentials are write-only: a problem about a token or a key names the field but never shows
 * the value (docs/semantics.md#git-credentials-redacted), and no status carries them.
 */
import {
  compact,
  fail,
  isDnsLabel,
  ok,
  type Problem,
  type Result,
} from "@flotilla/core";
import type * as wire from "../generated/index.js";
import { enumCodec } from "./enum-codec.js";

/**
 * How the hub authenticates to a repository. These types are the hub GitRepo manager's contract
 * too (packages/hub/src/gitrepos/gitrepo-service.ts names them).
 */
export type GitCredentials =
  | {
      /** HTTPS: a token, sent as basic auth (`username`, default `x-access-token`, and the token). */
      readonly kind: "token";
      readonly username?: string;
      readonly token: string;
    }
  | {
      /** SSH: a private key (OpenSSH PEM), and the server's host keys (known_hosts lines). */
      readonly kind: "ssh";
      readonly privateKey: string;
      readonly knownHosts?: string;
    };

/** What an operator sets on a repository. */
export interface GitRepoSettings {
  /** Unique name (DNS label rules, as every name in the hub). */
  readonly name: string;
  /** https://, http://, ssh://, git://, file:// or scp-like `user@host:path`. */
  readonly repo: string;
  /** The branch to follow; absent with no revision: the repository's default branch (its HEAD). */
  readonly branch?: string;
  /** A fixed commit (or tag) instead of a branch; exclusive with `branch`. */
  readonly revision?: string;
  /** Directories of the repository to read bundles from (relative, `/`-separated); default `["."]`. */
  readonly paths: readonly string[];
  /** How often the hub looks for a new commit; default 15 s. */
  readonly pollIntervalSeconds: number;
  /** A staged run per commit: refused by the hub for now (docs/gitops.md#staged-rollouts). */
  readonly updateStrategyName?: string;
  /** Delete a bundle whose directory a new commit removed (default true, as Fleet). */
  readonly deleteRemoved: boolean;
}

/** A checked add or update request. */
export interface GitRepoRequestInput extends GitRepoSettings {
  /** New credentials; `null` removes them; absent keeps what is stored (update) or none (add). */
  readonly credentials?: GitCredentials | null;
}

/** One bundle a repository made. */
export interface GitRepoBundleView {
  /** The bundle's name (Fleet's naming: the repository's name and the directory's path). */
  readonly bundle: string;
  /** The directory in the repository. */
  readonly path: string;
  /** The bundle's current revision, as the last applied commit made it. */
  readonly revision: string;
  /** Targets Ready at that revision, and all targets. */
  readonly ready: number;
  readonly targets: number;
  /** A one-line summary of the bundle's state (e.g. "3/5 Ready, 1 Modified"). */
  readonly summary: string;
}

/** The last thing that went wrong, until a sync succeeds. */
export interface GitRepoErrorView {
  readonly message: string;
  /** The commit it concerns, when one was read. */
  readonly commit?: string;
  readonly atMs: number;
}

/** What the hub knows of a repository. */
export interface GitRepoView {
  readonly spec: GitRepoSettings;
  /** Whether credentials are stored, and of which kind; never the credentials themselves. */
  readonly credentials?: GitCredentials["kind"];
  /** The newest commit seen on the branch (or the fixed revision, resolved). */
  readonly commitSeen?: string;
  /** The commit whose bundles are applied. */
  readonly commitDeployed?: string;
  readonly lastError?: GitRepoErrorView;
  readonly lastSyncAtMs?: number;
  readonly bundles: readonly GitRepoBundleView[];
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** Bounds of `poll_interval_seconds` (0 on the wire: the default). */
export const GIT_POLL_INTERVAL_SECONDS = {
  min: 5,
  max: 86_400,
  default: 15,
} as const;

/** Most directories one repository may name, and the longest texts. */
export const GIT_REPO_LIMITS = {
  paths: 100,
  pathLength: 1024,
  repoLength: 2048,
  refLength: 255,
  tokenLength: 4096,
  keyLength: 16_384,
  knownHostsLength: 65_536,
} as const;

/** `none` / `token` / `ssh` ↔ GIT_CREDENTIALS_KIND_*. */
export const GIT_CREDENTIALS_KIND = enumCodec({
  none: "GIT_CREDENTIALS_KIND_NONE",
  token: "GIT_CREDENTIALS_KIND_TOKEN",
  ssh: "GIT_CREDENTIALS_KIND_SSH",
} as const);

/** What an add or update request carries, as the generated types read it. */
export interface GitRepoRequestWire {
  readonly name: string;
  readonly spec: wire.GitRepoSpec__Output | null;
  readonly credentials: wire.GitRepoCredentials__Output | null;
  /** Update only. */
  readonly removeCredentials?: boolean;
}

/** Whether `text` holds a control character (C0 or DEL). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
const URL_FORM = /^(https?|ssh|git|file):\/\//;
const SCP_FORM = /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:(?!\/\/)\S+$/;

/** Why `url` is not a repository address, or undefined. */
function repoProblem(url: string): string | undefined {
  if (url === "") return "is required";
  if (url.length > GIT_REPO_LIMITS.repoLength)
    return `must be at most ${String(GIT_REPO_LIMITS.repoLength)} characters`;
  if (hasControl(url) || /\s/.test(url))
    return "must not contain spaces or control characters";
  if (SCP_FORM.test(url) && !URL_FORM.test(url)) return undefined;
  const scheme = URL_FORM.exec(url)?.[1];
  if (scheme === undefined) {
    return "must be an https://, http://, ssh://, git:// or file:// URL, or user@host:path";
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a valid URL";
  }
  if (scheme !== "file" && parsed.hostname === "") return "has no host";
  if (scheme === "file" && parsed.pathname.length <= 1) return "has no path";
  if (
    parsed.password !== "" ||
    (scheme.startsWith("http") && parsed.username !== "")
  ) {
    return "must not carry credentials: give them with --git-token-file or --ssh-key-file";
  }
  return undefined;
}

/** The repository address as it may be shown: any password in it replaced. */
function shownRepo(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^/@:]*):[^/@]*@/, "$1:(redacted)@");
}

/** Why `ref` is not a branch, tag or commit name git accepts (git check-ref-format), or undefined. */
function refProblem(ref: string): string | undefined {
  if (ref === "") return "must not be empty";
  if (ref.length > GIT_REPO_LIMITS.refLength)
    return `must be at most ${String(GIT_REPO_LIMITS.refLength)} characters`;
  if (
    hasControl(ref) ||
    /[\s~^:?*[\\]/.test(ref) ||
    ref.includes("..") ||
    ref.includes("@{") ||
    ref.includes("//") ||
    ref.startsWith("-") ||
    ref.startsWith("/") ||
    ref.endsWith("/") ||
    ref.endsWith(".") ||
    ref.endsWith(".lock") ||
    ref === "@"
  ) {
    return "is not a valid git ref name (no spaces, ~ ^ : ? * [ \\, '..', '//', '@{'; not starting with '-' or '/', not ending with '/', '.' or '.lock')";
  }
  return undefined;
}

/** Why `path` is not a directory of a repository, or undefined. */
function pathProblem(path: string): string | undefined {
  if (path === "") return "must not be empty";
  if (path.length > GIT_REPO_LIMITS.pathLength)
    return `must be at most ${String(GIT_REPO_LIMITS.pathLength)} characters`;
  if (hasControl(path)) return "must not contain control characters";
  if (path.startsWith("/")) return "must be relative to the repository's root";
  if (path.includes("\\")) return "must be /-separated";
  if (path === ".") return undefined;
  const segments = path.replace(/\/$/, "").split("/");
  if (segments.includes("..")) return "must not contain '..'";
  if (segments.some((s) => s === "" || s === "."))
    return "must not contain empty or '.' segments";
  return undefined;
}

/** The cipher of an OpenSSH private key ("none" when it has no passphrase), or undefined. */
function opensshCipher(body: string): string | undefined {
  const bytes = Buffer.from(body.replace(/\s+/g, ""), "base64");
  const magic = "openssh-key-v1\0";
  if (bytes.subarray(0, magic.length).toString("latin1") !== magic)
    return undefined;
  if (bytes.length < magic.length + 4) return undefined;
  const length = bytes.readUInt32BE(magic.length);
  const start = magic.length + 4;
  if (bytes.length < start + length) return undefined;
  return bytes.subarray(start, start + length).toString("latin1");
}

const PEM =
  /^-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)\r?\n-----END \1-----\s*$/;

/** Why `key` is not a private key the hub can use, or undefined. Never echoes the key. */
export function sshPrivateKeyProblem(key: string): string | undefined {
  const text = key.trim();
  if (text === "") return "is required";
  if (key.length > GIT_REPO_LIMITS.keyLength)
    return `must be at most ${String(GIT_REPO_LIMITS.keyLength)} characters`;
  if (/^(ssh-|ecdsa-|sk-)\S+ [A-Za-z0-9+/=]+/.test(text))
    return "is a public key; give the private key (the file without .pub)";
  const pem = PEM.exec(text);
  if (pem === null) {
    return "is not a private key: expected a PEM block such as -----BEGIN OPENSSH PRIVATE KEY-----";
  }
  const label = pem[1] ?? "";
  const body = pem[2] ?? "";
  if (label === "ENCRYPTED PRIVATE KEY" || /Proc-Type: 4,ENCRYPTED/.test(body))
    return "is encrypted with a passphrase, which the hub cannot enter; give a key without one";
  if (!/^(OPENSSH |RSA |EC |DSA )?PRIVATE KEY$/.test(label))
    return `is a ${label}, not a private key`;
  if (label === "OPENSSH PRIVATE KEY") {
    const cipher = opensshCipher(body);
    if (cipher === undefined) return "is not a valid OpenSSH private key";
    if (cipher !== "none")
      return "is encrypted with a passphrase, which the hub cannot enter; give a key without one";
  }
  return undefined;
}

/** Why `text` is not known_hosts lines, or undefined (line numbers from 1). */
function knownHostsProblem(text: string): string | undefined {
  if (text.length > GIT_REPO_LIMITS.knownHostsLength)
    return `must be at most ${String(GIT_REPO_LIMITS.knownHostsLength)} characters`;
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const fields = line.split(/\s+/);
    const needed = line.startsWith("@") ? 4 : 3;
    if (fields.length < needed) {
      return `line ${String(i + 1)} is not a known_hosts line (hosts, key type, key)`;
    }
  }
  return undefined;
}

function credentialsFromWire(
  creds: wire.GitRepoCredentials__Output,
  repo: string,
  problems: Problem[],
): GitCredentials | undefined {
  const sshRepo = SCP_FORM.test(repo) || repo.startsWith("ssh://");
  if (creds.token != null) {
    const { token, username } = creds.token;
    const before = problems.length;
    if (token.trim() === "")
      problems.push({
        path: "credentials.token.token",
        message: "is required",
      });
    else if (token.length > GIT_REPO_LIMITS.tokenLength)
      problems.push({
        path: "credentials.token.token",
        message: `must be at most ${String(GIT_REPO_LIMITS.tokenLength)} characters`,
      });
    else if (/\s/.test(token) || hasControl(token))
      problems.push({
        path: "credentials.token.token",
        message: "must not contain spaces, line breaks or control characters",
      });
    if (username !== "" && (/[\s:]/.test(username) || hasControl(username)))
      problems.push({
        path: "credentials.token.username",
        message: "must not contain ':', spaces or control characters",
        value: username,
      });
    if (!/^https?:\/\//.test(repo))
      problems.push({
        path: "credentials.token",
        message: "a token is for an https:// or http:// repository",
      });
    if (problems.length > before) return undefined;
    return {
      kind: "token",
      token,
      ...compact({ username: username === "" ? undefined : username }),
    };
  }
  if (creds.ssh != null) {
    const { privateKey, knownHosts } = creds.ssh;
    const before = problems.length;
    const keyProblem = sshPrivateKeyProblem(privateKey);
    if (keyProblem !== undefined)
      problems.push({
        path: "credentials.ssh.privateKey",
        message: keyProblem,
      });
    const hostsProblem = knownHostsProblem(knownHosts);
    if (hostsProblem !== undefined)
      problems.push({
        path: "credentials.ssh.knownHosts",
        message: hostsProblem,
      });
    if (!sshRepo)
      problems.push({
        path: "credentials.ssh",
        message: "an SSH key is for an ssh:// or user@host:path repository",
      });
    if (problems.length > before) return undefined;
    return {
      kind: "ssh",
      privateKey,
      ...compact({
        knownHosts: knownHosts.trim() === "" ? undefined : knownHosts,
      }),
    };
  }
  problems.push({
    path: "credentials",
    message: "must hold a token or an SSH key",
  });
  return undefined;
}

/**
 * An AddGitRepo or UpdateGitRepo request checked whole: every problem with its field path (and
 * its value, except for secrets), or the manager's input.
 */
export function gitRepoInputFromWire(
  request: GitRepoRequestWire,
): Result<GitRepoRequestInput> {
  const problems: Problem[] = [];
  const { name, spec } = request;
  if (name === "")
    problems.push({ path: "name", message: "is required", value: name });
  else if (!isDnsLabel(name))
    problems.push({
      path: "name",
      message:
        "must be a DNS label: at most 63 lower-case letters, digits and '-', starting and ending alphanumeric",
      value: name,
    });
  if (spec === null) {
    problems.push({ path: "spec", message: "is required", value: null });
    return fail(problems);
  }
  const repoWords = repoProblem(spec.repo);
  if (repoWords !== undefined)
    problems.push({
      path: "spec.repo",
      message: repoWords,
      value: shownRepo(spec.repo),
    });
  for (const field of ["branch", "revision"] as const) {
    const ref = spec[field];
    if (ref == null) continue;
    const words = refProblem(ref);
    if (words !== undefined)
      problems.push({ path: `spec.${field}`, message: words, value: ref });
  }
  if (spec.branch != null && spec.revision != null)
    problems.push({
      path: "spec.revision",
      message:
        "cannot be set with spec.branch: follow a branch or pin a revision",
      value: spec.revision,
    });
  if (spec.paths.length > GIT_REPO_LIMITS.paths)
    problems.push({
      path: "spec.paths",
      message: `must have at most ${String(GIT_REPO_LIMITS.paths)} items`,
      value: spec.paths.length,
    });
  const seen = new Set<string>();
  for (const [i, path] of spec.paths.entries()) {
    const words =
      pathProblem(path) ?? (seen.has(path) ? "is listed twice" : undefined);
    seen.add(path);
    if (words !== undefined)
      problems.push({
        path: `spec.paths[${String(i)}]`,
        message: words,
        value: path,
      });
  }
  const poll = spec.pollIntervalSeconds;
  const { min, max } = GIT_POLL_INTERVAL_SECONDS;
  if (poll !== 0 && (poll < min || poll > max))
    problems.push({
      path: "spec.pollIntervalSeconds",
      message: `must be from ${String(min)} s to ${String(max)} s (24 h)`,
      value: poll,
    });
  const strategy = spec.updateStrategy;
  if (strategy != null && !isDnsLabel(strategy))
    problems.push({
      path: "spec.updateStrategy",
      message: "must name an update strategy (a DNS label)",
      value: strategy,
    });
  let credentials: GitCredentials | null | undefined;
  if (request.credentials !== null) {
    credentials = credentialsFromWire(request.credentials, spec.repo, problems);
    if (request.removeCredentials === true)
      problems.push({
        path: "removeCredentials",
        message: "cannot be set with credentials",
        value: true,
      });
  } else if (request.removeCredentials === true) credentials = null;
  if (problems.length > 0) return fail(problems);
  return ok({
    name,
    repo: spec.repo,
    paths: spec.paths.length === 0 ? ["."] : [...spec.paths],
    pollIntervalSeconds: poll === 0 ? GIT_POLL_INTERVAL_SECONDS.default : poll,
    deleteRemoved: spec.deleteRemoved ?? true,
    ...compact({
      branch: spec.branch ?? undefined,
      revision: spec.revision ?? undefined,
      updateStrategyName: strategy ?? undefined,
      credentials,
    }),
  });
}

/** A spec as the wire carries it (its name travels beside it). */
export function gitRepoSpecToWire(spec: GitRepoSettings): wire.GitRepoSpec {
  return {
    repo: spec.repo,
    paths: [...spec.paths],
    pollIntervalSeconds: spec.pollIntervalSeconds,
    deleteRemoved: spec.deleteRemoved,
    ...compact({
      branch: spec.branch,
      revision: spec.revision,
      updateStrategy: spec.updateStrategyName,
    }),
  };
}

/** Credentials as a request carries them (the CLI's side). */
export function gitCredentialsToWire(
  creds: GitCredentials,
): wire.GitRepoCredentials {
  return creds.kind === "token"
    ? { token: { username: creds.username ?? "", token: creds.token } }
    : {
        ssh: {
          privateKey: creds.privateKey,
          knownHosts: creds.knownHosts ?? "",
        },
      };
}

/** A repository's bundle rows, field by field (the wire's and the domain's are alike). */
function bundleRows(
  rows: GitRepoView["bundles"],
): GitRepoView["bundles"][number][] {
  return rows.map((b) => ({
    bundle: b.bundle,
    path: b.path,
    revision: b.revision,
    ready: b.ready,
    targets: b.targets,
    summary: b.summary,
  }));
}

/** A status on the wire: its credentials only by kind. */
export function gitRepoToWire(status: GitRepoView): wire.GitRepo {
  return {
    name: status.spec.name,
    spec: gitRepoSpecToWire(status.spec),
    credentials: GIT_CREDENTIALS_KIND.toWire(status.credentials ?? "none"),
    bundles: bundleRows(status.bundles),
    createdAtMs: status.createdAtMs,
    updatedAtMs: status.updatedAtMs,
    ...compact({
      commitSeen: status.commitSeen,
      commitDeployed: status.commitDeployed,
      lastSyncAtMs: status.lastSyncAtMs,
      lastError:
        status.lastError === undefined
          ? undefined
          : {
              message: status.lastError.message,
              atMs: status.lastError.atMs,
              ...compact({ commit: status.lastError.commit }),
            },
    }),
  };
}

/** A status as the hub sent it, read back (the CLI's side); an unknown kind reads as none. */
export function gitRepoFromWire(repo: wire.GitRepo__Output): GitRepoView {
  const spec = repo.spec;
  const kind = GIT_CREDENTIALS_KIND.fromWire(repo.credentials) ?? "none";
  return {
    spec: {
      name: repo.name,
      repo: spec?.repo ?? "",
      paths: spec?.paths ?? [],
      pollIntervalSeconds: spec?.pollIntervalSeconds ?? 0,
      deleteRemoved: spec?.deleteRemoved ?? true,
      ...compact({
        branch: spec?.branch ?? undefined,
        revision: spec?.revision ?? undefined,
        updateStrategyName: spec?.updateStrategy ?? undefined,
      }),
    },
    bundles: bundleRows(repo.bundles),
    createdAtMs: repo.createdAtMs,
    updatedAtMs: repo.updatedAtMs,
    ...compact({
      credentials: kind === "none" ? undefined : kind,
      commitSeen: repo.commitSeen ?? undefined,
      commitDeployed: repo.commitDeployed ?? undefined,
      lastSyncAtMs: repo.lastSyncAtMs ?? undefined,
      lastError:
        repo.lastError == null
          ? undefined
          : {
              message: repo.lastError.message,
              atMs: repo.lastError.atMs,
              ...compact({ commit: repo.lastError.commit ?? undefined }),
            },
    }),
  };
}
