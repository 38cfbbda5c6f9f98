/**
 * The flags of `flotilla gitrepo add|update` and the request they make (docs/cli.md#git-repositories).
 * Tokens and keys are read from files (`-` for standard input), never taken as argument values,
 * which `ps` and shell histories would keep. The request is checked locally with the check the hub
 * runs (protocol's `gitRepoInputFromWire`), and each problem is told against the flag it came
 * from, with its value (a secret's never).
 */
import { compact, parseDuration, type Problem } from "@flotilla/core";
import {
  gitRepoInputFromWire,
  type GitCredentials,
  type wire,
} from "@flotilla/protocol";
import { describeReadError } from "../input.js";
import type { CliIo } from "../io.js";
import type { OptionSpec, ParsedArgs } from "./command.js";

/** The spec flags shared by add and update. */
export const GITREPO_SPEC_OPTIONS = {
  repo: {
    type: "string",
    valueName: "URL",
    description:
      "https://, http://, ssh://, git://, file:// URL, or user@host:path",
  },
  branch: {
    type: "string",
    valueName: "BRANCH",
    description:
      "the branch to follow (default: the repository's default branch)",
  },
  revision: {
    type: "string",
    valueName: "REV",
    description: "a fixed commit or tag instead of a branch",
  },
  paths: {
    type: "string",
    valueName: "DIR[,DIR]",
    multiple: true,
    description:
      "bundle directories, relative to the repository's root (default: .)",
  },
  "poll-interval": {
    type: "string",
    valueName: "DURATION",
    description: "how often to look for a new commit, 5s to 24h (default 15s)",
  },
  strategy: {
    type: "string",
    valueName: "NAME",
    description:
      "stage every bundle: each commit's new bundle revisions roll out as runs of this stored update strategy, made and started by the hub (instead of each fleet.yaml's rolloutStrategy)",
  },
  "delete-removed": {
    type: "string",
    valueName: "true|false",
    choices: ["true", "false"],
    description:
      "delete a bundle whose directory a commit removed (default true)",
  },
  "git-token-file": {
    type: "string",
    valueName: "FILE",
    description: "HTTPS: a file holding the token (- for standard input)",
  },
  username: {
    type: "string",
    valueName: "USER",
    description: "HTTPS: the user sent with the token (default x-access-token)",
  },
  "ssh-key-file": {
    type: "string",
    valueName: "FILE",
    description:
      "SSH: a private key file without a passphrase (- for standard input)",
  },
  "known-hosts-file": {
    type: "string",
    valueName: "FILE",
    description: "SSH: known_hosts lines for the server's host keys",
  },
} as const satisfies Record<string, OptionSpec>;

/** The flag each request field comes from. */
const FLAG_OF: readonly [RegExp, string][] = [
  [/^name$/, "NAME"],
  [/^spec\.repo$/, "--repo"],
  [/^spec\.branch$/, "--branch"],
  [/^spec\.revision$/, "--revision"],
  [/^spec\.paths/, "--paths"],
  [/^spec\.pollIntervalSeconds$/, "--poll-interval"],
  [/^spec\.updateStrategy$/, "--strategy"],
  [/^credentials\.token\.username$/, "--username"],
  [/^credentials\.token/, "--git-token-file"],
  [/^credentials\.ssh\.knownHosts$/, "--known-hosts-file"],
  [/^credentials\.ssh/, "--ssh-key-file"],
  [/^credentials$/, "--git-token-file or --ssh-key-file"],
  [/^removeCredentials$/, "--remove-credentials"],
];

/** The values the flags were given, to show beside a problem. */
export interface FlagValues {
  readonly [flag: string]: string | undefined;
}

/** A problem of the request told against its flag: `--branch "a b": is not …`. */
export function flagProblem(problem: Problem, given: FlagValues): string {
  const flag =
    FLAG_OF.find(([pattern]) => pattern.test(problem.path))?.[1] ??
    problem.path;
  const shown = given[flag];
  const value =
    shown !== undefined
      ? shown
      : problem.value === undefined
        ? undefined
        : typeof problem.value === "string"
          ? problem.value
          : JSON.stringify(problem.value);
  return value === undefined
    ? `${flag}: ${problem.message}`
    : `${flag} ${JSON.stringify(value)}: ${problem.message}`;
}

/** A file's text, `-` meaning standard input; or why it cannot be read, naming the flag. */
async function readSecretFile(
  io: CliIo,
  flag: string,
  path: string,
  problems: string[],
): Promise<string | undefined> {
  try {
    if (path === "-") {
      if (io.readStdin === undefined) {
        problems.push(`${flag} -: standard input cannot be read here`);
        return undefined;
      }
      return await io.readStdin();
    }
    return await io.readFile(path);
  } catch (error) {
    problems.push(`${flag} ${path}: cannot read: ${describeReadError(error)}`);
    return undefined;
  }
}

/**
 * The credentials the flags give: undefined when none are named; problems (naming the flag) when
 * the flags conflict or a file cannot be read.
 */
export async function readCredentials(
  io: CliIo,
  args: ParsedArgs,
  problems: string[],
): Promise<GitCredentials | undefined> {
  const tokenFile = args.string("git-token-file");
  const keyFile = args.string("ssh-key-file");
  const username = args.string("username");
  const hostsFile = args.string("known-hosts-file");
  if (tokenFile !== undefined && keyFile !== undefined) {
    problems.push("--git-token-file and --ssh-key-file: give one or the other");
    return undefined;
  }
  if (username !== undefined && tokenFile === undefined)
    problems.push(
      `--username ${JSON.stringify(username)}: needs --git-token-file`,
    );
  if (hostsFile !== undefined && keyFile === undefined)
    problems.push(`--known-hosts-file ${hostsFile}: needs --ssh-key-file`);
  if (tokenFile === "-" && hostsFile === "-")
    problems.push("--known-hosts-file -: standard input is taken by the token");
  if (keyFile === "-" && hostsFile === "-")
    problems.push("--known-hosts-file -: standard input is taken by the key");
  if (tokenFile !== undefined) {
    const token = await readSecretFile(
      io,
      "--git-token-file",
      tokenFile,
      problems,
    );
    if (token === undefined) return undefined;
    // A token file ends with a newline more often than not; the token is the text without it.
    return { kind: "token", token: token.trim(), ...compact({ username }) };
  }
  if (keyFile !== undefined) {
    const privateKey = await readSecretFile(
      io,
      "--ssh-key-file",
      keyFile,
      problems,
    );
    const knownHosts =
      hostsFile === undefined
        ? undefined
        : await readSecretFile(io, "--known-hosts-file", hostsFile, problems);
    if (privateKey === undefined) return undefined;
    return { kind: "ssh", privateKey, ...compact({ knownHosts }) };
  }
  return undefined;
}

/** `--paths a,b --paths c` → `["a", "b", "c"]`; undefined when not given. */
function pathsOf(args: ParsedArgs): string[] | undefined {
  const given = args.strings("paths");
  if (given.length === 0) return undefined;
  return given.flatMap((p) => p.split(",")).map((p) => p.trim());
}

/**
 * The spec the flags make on top of `base` (update: the stored spec; add: an empty one). A branch
 * given drops a stored revision and the other way round; `--strategy ''` drops the strategy.
 */
export function specFromFlags(
  args: ParsedArgs,
  base: wire.GitRepoSpec,
  problems: string[],
): wire.GitRepoSpec {
  const branch = args.string("branch");
  const revision = args.string("revision");
  const poll = args.string("poll-interval");
  let pollIntervalSeconds = base.pollIntervalSeconds ?? 0;
  if (poll !== undefined) {
    const parsed = parseDuration(poll);
    if (!parsed.ok)
      problems.push(
        `--poll-interval ${JSON.stringify(poll)}: ${parsed.problems[0]?.message ?? "is not a duration"}`,
      );
    else if (parsed.value % 1000 !== 0)
      problems.push(
        `--poll-interval ${JSON.stringify(poll)}: must be whole seconds`,
      );
    else pollIntervalSeconds = parsed.value / 1000;
  }
  const strategy = args.string("strategy");
  const deleteRemoved = args.string("delete-removed");
  const keepRef = branch === undefined && revision === undefined;
  return {
    repo: args.string("repo") ?? base.repo ?? "",
    paths: pathsOf(args) ?? base.paths ?? [],
    pollIntervalSeconds,
    ...compact({
      branch: keepRef ? (base.branch ?? undefined) : branch,
      revision: keepRef ? (base.revision ?? undefined) : revision,
      updateStrategy:
        strategy === undefined
          ? (base.updateStrategy ?? undefined)
          : strategy === ""
            ? undefined
            : strategy,
      deleteRemoved:
        deleteRemoved === undefined
          ? (base.deleteRemoved ?? undefined)
          : deleteRemoved === "true",
    }),
  };
}

/** What the flags were given, by the name {@link flagProblem} shows. */
export function givenFlags(args: ParsedArgs, name: string): FlagValues {
  const values: Record<string, string | undefined> = { NAME: name };
  for (const flag of [
    "repo",
    "branch",
    "revision",
    "poll-interval",
    "strategy",
    "username",
    "git-token-file",
    "ssh-key-file",
    "known-hosts-file",
  ]) {
    values[`--${flag}`] = args.string(flag);
  }
  const paths = args.strings("paths");
  if (paths.length > 0) values["--paths"] = paths.join(",");
  return values;
}

/** Credentials as the hub reads them off the wire. */
function credentialsOutput(
  creds: GitCredentials | undefined,
): wire.GitRepoCredentials__Output | null {
  if (creds === undefined) return null;
  return creds.kind === "token"
    ? {
        kind: "token",
        token: { username: creds.username ?? "", token: creds.token },
      }
    : {
        kind: "ssh",
        ssh: {
          privateKey: creds.privateKey,
          knownHosts: creds.knownHosts ?? "",
        },
      };
}

/** A request checked as the hub checks it; the problems told against the flags. */
export function checkRequest(
  request: {
    readonly name: string;
    readonly spec: wire.GitRepoSpec;
    readonly credentials?: GitCredentials;
    readonly removeCredentials?: boolean;
  },
  given: FlagValues,
): string[] {
  const spec = request.spec;
  const checked = gitRepoInputFromWire({
    name: request.name,
    spec: {
      repo: spec.repo ?? "",
      paths: spec.paths ?? [],
      pollIntervalSeconds: spec.pollIntervalSeconds ?? 0,
      ...compact({
        branch: spec.branch,
        revision: spec.revision,
        updateStrategy: spec.updateStrategy,
        deleteRemoved: spec.deleteRemoved,
      }),
    },
    credentials: credentialsOutput(request.credentials),
    ...compact({ removeCredentials: request.removeCredentials }),
  });
  return checked.ok ? [] : checked.problems.map((p) => flagProblem(p, given));
}
