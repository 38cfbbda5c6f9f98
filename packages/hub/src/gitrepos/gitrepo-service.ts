/**
 * Git repositories as a bundle source: what the admin API asks of the hub's
 * GitRepo manager. The manager keeps each repository's spec, credentials and status in the state
 * store, follows the repository (polling, and at once on a verified webhook or `sync`), and turns
 * the bundle directories of each new commit into bundle revisions through the bundle manager.
 *
 * Credentials are write-only: they are stored for the manager's git client and never returned by
 * any call nor written to the audit log; statuses only say whether there are any and their kind.
 */
import type { OperationOptions } from "../store/state-store.js";

/** How the hub authenticates to a repository. */
export type GitRepoCredentials =
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

/** What an operator sets on a git repository. */
export interface GitRepoSpec {
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
  /** When set, every new revision a commit makes is rolled out by a staged run of this strategy. */
  readonly updateStrategyName?: string;
  /** Delete a bundle whose directory a new commit removed (default true, as Fleet). */
  readonly deleteRemoved: boolean;
}

/** Creating or replacing a repository: its spec and, optionally, credentials. */
export interface GitRepoInput extends GitRepoSpec {
  /** New credentials; `null` removes them; absent keeps what is stored (update) or none (add). */
  readonly credentials?: GitRepoCredentials | null;
}

/** One bundle a repository made. */
export interface GitRepoBundleStatus {
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
export interface GitRepoError {
  readonly message: string;
  /** The commit it concerns, when one was read. */
  readonly commit?: string;
  readonly atMs: number;
}

/** What the hub knows of a repository. */
export interface GitRepoStatus {
  readonly spec: GitRepoSpec;
  /** Whether credentials are stored, and of which kind; never the credentials themselves. */
  readonly credentials?: GitRepoCredentials["kind"];
  /** The newest commit seen on the branch (or the fixed revision, resolved). */
  readonly commitSeen?: string;
  /** The commit whose bundles are applied. */
  readonly commitDeployed?: string;
  readonly lastError?: GitRepoError;
  readonly lastSyncAtMs?: number;
  readonly bundles: readonly GitRepoBundleStatus[];
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** The GitRepo manager as the admin API uses it. Errors are FlotillaErrors (codes as named). */
export interface GitRepoService {
  /** Stores a new repository and syncs it soon; `already_exists`, `invalid_argument` (problems). */
  add(input: GitRepoInput, options?: OperationOptions): Promise<GitRepoStatus>;
  /** Replaces a repository's spec (and credentials as `input.credentials` says); `not_found`. */
  update(
    input: GitRepoInput,
    options?: OperationOptions,
  ): Promise<GitRepoStatus>;
  /** Forgets a repository; with `deleteBundles` its bundles go too (default true). `not_found`. */
  delete(
    name: string,
    deleteBundles: boolean,
    options?: OperationOptions,
  ): Promise<void>;
  /** `not_found` for an unknown name. */
  get(name: string, options?: OperationOptions): Promise<GitRepoStatus>;
  list(options?: OperationOptions): Promise<readonly GitRepoStatus[]>;
  /** Looks for a new commit now and applies it; resolves with the status after that attempt. */
  sync(name: string, options?: OperationOptions): Promise<GitRepoStatus>;
  /** The status now, then every change of it, until `signal` aborts; `not_found`. */
  watch(name: string, signal: AbortSignal): AsyncIterable<GitRepoStatus>;
}
