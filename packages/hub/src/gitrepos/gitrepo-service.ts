/**
 * Git repositories as a bundle source: what the admin API asks of the hub's
 * GitRepo manager. The manager keeps each repository's spec, credentials and status in the state
 * store, follows the repository (polling, and at once on a verified webhook or `sync`), and turns
 * the bundle directories of each new commit into bundle revisions through the bundle manager.
 *
 * Credentials are write-only: they are stored for the manager's git client and never returned by
 * any call nor written to the audit log; statuses only say whether there are any and their kind.
 */
import type {
  GitCredentials,
  GitRepoBundleView,
  GitRepoErrorView,
  GitRepoRequestInput,
  GitRepoSettings,
  GitRepoView,
} from "@flotilla/protocol";
import type { OperationOptions } from "../store/state-store.js";

// The shapes are the admin API's (packages/protocol/src/codecs/gitrepos.ts), under the names the
// manager uses.
/** How the hub authenticates to a repository. */
export type GitRepoCredentials = GitCredentials;
/** What an operator sets on a git repository. */
export type GitRepoSpec = GitRepoSettings;
/** Creating or replacing a repository: its spec and, optionally, credentials. */
export type GitRepoInput = GitRepoRequestInput;
/** One bundle a repository made. */
export type GitRepoBundleStatus = GitRepoBundleView;
/** The last thing that went wrong, until a sync succeeds. */
export type GitRepoError = GitRepoErrorView;
/** What the hub knows of a repository. */
export type GitRepoStatus = GitRepoView;

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
