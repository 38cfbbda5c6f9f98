/**
 * AdminService: git repositories as a bundle source (docs/cli.md#git-repositories). The handlers
 * check each request whole (protocol's `gitRepoInputFromWire`: every problem with its field path,
 * before anything is stored), audit every change, and leave the work to the hub's GitRepo manager
 * (gitrepos/gitrepo-service.ts). A hub started without a manager refuses every call with
 * FAILED_PRECONDITION, saying so.
 *
 * Credentials are write-only (docs/semantics.md#git-credentials-redacted): they reach the
 * manager and nothing else. No answer carries them, and the texts of refusals (which the audit
 * log records) and the last errors of statuses have every secret of the request and every
 * password in a URL replaced, in case a git error echoed one.
 */
import { FlotillaError } from "@flotilla/core";
import {
  gitRepoInputFromWire,
  gitRepoToWire,
  toGrpcStatus,
  type GitRepoRequestWire,
  type wire,
} from "@flotilla/protocol";
import type { ServerWritableStream } from "@grpc/grpc-js";
import type {
  GitRepoInput,
  GitRepoService,
} from "../gitrepos/gitrepo-service.js";
import { requireName } from "./admin-fleet.js";
import { paginate } from "./pages.js";
import {
  audited,
  callContext,
  unary,
  type AuditDeps,
  type AuditTarget,
} from "./unary.js";

type Handlers = wire.AdminServiceHandlers;

/** The AdminService methods of git repositories. */
export type GitRepoMethod =
  | "AddGitRepo"
  | "UpdateGitRepo"
  | "DeleteGitRepo"
  | "GetGitRepo"
  | "ListGitRepos"
  | "SyncGitRepo"
  | "WatchGitRepo";

export interface GitRepoHandlerDeps extends AuditDeps {
  /** The hub's GitRepo manager; undefined: this hub does not follow git repositories. */
  readonly gitRepos: GitRepoService | undefined;
}

const WHAT = "git repository";

/** What replaces a secret in any text that leaves the hub. */
export const REDACTED = "(redacted)";

/** The manager, or the refusal of a hub without one. */
function service(deps: GitRepoHandlerDeps): GitRepoService {
  if (deps.gitRepos !== undefined) return deps.gitRepos;
  throw new FlotillaError(
    "failed_precondition",
    "This hub does not follow git repositories: it runs without a GitRepo manager",
  );
}

/** The secrets of a request's credentials, and each line of a key (an error may quote one). */
function secretsOf(input: GitRepoInput): string[] {
  const creds = input.credentials;
  if (creds === undefined || creds === null) return [];
  if (creds.kind === "token") return [creds.token];
  return [
    creds.privateKey,
    ...creds.privateKey
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.length >= 8 && !line.startsWith("-----")),
  ];
}

/** A password in a URL (`https://user:PASSWORD@host`), as a git error may quote a remote. */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*):[^\s/@]*@/gi;

/**
 * `text` with every secret (longest first) and every password in a URL replaced by
 * {@link REDACTED}.
 */
function redact(text: string, secrets: readonly string[]): string {
  let out = text.replace(URL_PASSWORD, `$1:${REDACTED}@`);
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret !== "") out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** `error` as a FlotillaError whose message and problems show none of `secrets`. */
function redactedError(error: unknown, secrets: readonly string[]): unknown {
  const flotilla = FlotillaError.from(error);
  return new FlotillaError(flotilla.code, redact(flotilla.message, secrets), {
    problems: flotilla.problems.map((p) => ({
      ...p,
      message: redact(p.message, secrets),
      ...(typeof p.value === "string"
        ? { value: redact(p.value, secrets) }
        : {}),
    })),
  });
}

/** A status on the wire, its last error {@link redact}ed. */
function repoToWire(
  status: Parameters<typeof gitRepoToWire>[0],
  secrets: readonly string[] = [],
): wire.GitRepo {
  const repo = gitRepoToWire(status);
  if (repo.lastError == null) return repo;
  return {
    ...repo,
    lastError: {
      ...repo.lastError,
      message: redact(repo.lastError.message ?? "", secrets),
    },
  };
}

/** An add or update request checked whole into the manager's input. */
function inputOf(request: GitRepoRequestWire): GitRepoInput {
  const checked = gitRepoInputFromWire(request);
  if (!checked.ok) throw FlotillaError.invalid(WHAT, checked.problems);
  return checked.value;
}

/** Runs `work` with the request's secrets kept out of whatever it throws. */
async function withSecrets<T>(
  secrets: readonly string[],
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw redactedError(error, secrets);
  }
}

function auditOf<Req extends { name: string; reason: string }>(
  method: GitRepoMethod,
): AuditTarget<Req> {
  return {
    method,
    targetKind: "git-repo",
    targetName: (r) => r.name,
    reason: (r) => r.reason,
  };
}

export function gitRepoHandlers(
  deps: GitRepoHandlerDeps,
): Pick<Handlers, GitRepoMethod> {
  return {
    AddGitRepo: unary(
      audited(deps, auditOf("AddGitRepo"), async (request) => {
        const input = inputOf(request);
        const secrets = secretsOf(input);
        return withSecrets(secrets, async () => ({
          repo: repoToWire(await service(deps).add(input), secrets),
        }));
      }),
    ),

    UpdateGitRepo: unary(
      audited(deps, auditOf("UpdateGitRepo"), async (request) => {
        const input = inputOf(request);
        const secrets = secretsOf(input);
        return withSecrets(secrets, async () => ({
          repo: repoToWire(await service(deps).update(input), secrets),
        }));
      }),
    ),

    DeleteGitRepo: unary(
      audited(deps, auditOf("DeleteGitRepo"), async (request) => {
        const name = requireName(request.name, "name", WHAT);
        await withSecrets([], () =>
          service(deps).delete(name, !request.keepBundles),
        );
        return {};
      }),
    ),

    GetGitRepo: unary(async (request) => {
      const name = requireName(request.name, "name", WHAT);
      return {
        repo: repoToWire(await withSecrets([], () => service(deps).get(name))),
      };
    }),

    ListGitRepos: unary(async (request) => {
      const all = await service(deps).list();
      const page = paginate(
        [...all].sort((a, b) => a.spec.name.localeCompare(b.spec.name)),
        (r) => r.spec.name,
        request.pageSize,
        request.pageToken,
      );
      return {
        repos: page.items.map((r) => repoToWire(r)),
        nextPageToken: page.nextPageToken,
      };
    }),

    SyncGitRepo: unary(
      audited(deps, auditOf("SyncGitRepo"), async (request) => {
        const name = requireName(request.name, "name", WHAT);
        return {
          repo: repoToWire(
            await withSecrets([], () => service(deps).sync(name)),
          ),
        };
      }),
    ),

    WatchGitRepo: (
      call: ServerWritableStream<
        wire.WatchGitRepoRequest__Output,
        wire.WatchGitRepoResponse
      >,
    ) => {
      const context = callContext(call);
      const stop = new AbortController();
      const end = (): void => {
        stop.abort();
      };
      context.signal.addEventListener("abort", end);
      call.on("close", end);
      const follow = async (): Promise<void> => {
        const name = requireName(call.request.name, "name", WHAT);
        for await (const status of service(deps).watch(name, stop.signal)) {
          if (stop.signal.aborted) return;
          call.write({ repo: repoToWire(status) });
        }
      };
      follow().then(
        () => {
          if (!stop.signal.aborted) call.end();
          stop.abort();
        },
        (error: unknown) => {
          if (!stop.signal.aborted) {
            call.emit("error", toGrpcStatus(redactedError(error, [])));
          }
          stop.abort();
        },
      );
    },
  };
}
