/**
 * `flotilla gitrepo add|update|delete|list|get|sync`: git repositories as a bundle source
 * (docs/cli.md#git-repositories). The hub follows a branch (or a pinned revision) and makes a
 * bundle of each bundle directory of the newest commit; `get --watch` follows a repository until
 * every bundle is Ready at the deployed commit.
 */
import { FlotillaError } from "@flotilla/core";
import {
  gitCredentialsToWire,
  gitRepoFromWire,
  type GitRepoView,
  type wire,
} from "@flotilla/protocol";
import { stringify } from "yaml";
import { EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE } from "../io.js";
import {
  adminCommand,
  prepared,
  refused,
  usageMessage,
  type AdminContext,
} from "../hub/admin-command.js";
import { present } from "../hub/answer.js";
import {
  plainJson,
  printJson,
  printJsonLine,
  printLines,
} from "../hub/output.js";
import { listAll } from "../hub/pages.js";
import {
  gitRepoLines,
  gitRepoListLines,
  gitRepoSettled,
} from "../render/gitrepo-view.js";
import type {
  Noun,
  OptionSpec,
  ParsedArgs,
  PositionalSpec,
} from "./command.js";
import {
  checkRequest,
  givenFlags,
  GITREPO_SPEC_OPTIONS,
  readCredentials,
  specFromFlags,
} from "./gitrepo-input.js";

const NOUN = "gitrepo";

const NAME: PositionalSpec = {
  name: "NAME",
  description: "the repository's name (a DNS label)",
};

/** `-o table|json|yaml`. */
const OUTPUT: OptionSpec = {
  type: "string",
  short: "o",
  choices: ["table", "json", "yaml"],
  description:
    "output format: table for people (default), json or yaml for machines",
};

/** Clears a terminal and moves the cursor home, for redrawing in place. */
const CLEAR_SCREEN = "\u001b[H\u001b[2J";

type Format = "table" | "json" | "yaml";

function formatOf(ctx: AdminContext): Format {
  const output = ctx.args.string("output");
  return output === "json" || output === "yaml" ? output : "table";
}

/** Prints a hub answer as JSON or YAML; false for the table format (the caller prints lines). */
function printMachine(ctx: AdminContext, answer: unknown): boolean {
  switch (formatOf(ctx)) {
    case "json":
      printJson(ctx.io, answer);
      return true;
    case "yaml":
      ctx.io.stdout(stringify(plainJson(answer)));
      return true;
    case "table":
      return false;
  }
}

function printRepo(
  ctx: AdminContext,
  answer: { repo: wire.GitRepo__Output | null },
  headline?: string,
): void {
  if (printMachine(ctx, answer)) return;
  const repo = gitRepoFromWire(present(answer.repo, "git repository"));
  printLines(ctx.io, [
    ...(headline === undefined ? [] : [headline, ""]),
    ...gitRepoLines(repo, ctx.render, ctx.io.now()),
  ]);
}

/** Prints local problems as `flotilla: gitrepo VERB: PROBLEM` and answers exit 2. */
function usage(
  ctx: AdminContext,
  verb: string,
  problems: readonly string[],
): number {
  ctx.io.stderr(
    problems.map((p) => `${usageMessage(`${NOUN} ${verb}`, p)}\n`).join(""),
  );
  return EXIT_USAGE;
}

interface AddInput {
  readonly name: string;
  readonly request: wire.AddGitRepoRequest;
}

const add = adminCommand({
  name: `${NOUN} add`,
  summary: "follow a git repository: a bundle from each bundle directory",
  description: [
    "Stores a repository for the hub to follow: it looks for a new commit every poll interval",
    "(and at once on `sync`) and makes one bundle of each directory given with --paths, named",
    "after the repository and the directory. Give --branch to follow a branch (default: the",
    "repository's default branch) or --revision to pin a commit or tag.",
    "Credentials come from files, never from the command line: --git-token-file (HTTPS, with",
    "--username) or --ssh-key-file (with --known-hosts-file); `-` reads standard input. The hub",
    "stores them and never shows them again.",
  ].join("\n"),
  positionals: [NAME],
  options: {
    ...GITREPO_SPEC_OPTIONS,
    repo: { ...GITREPO_SPEC_OPTIONS.repo, required: true },
  },
  output: OUTPUT,
  mutating: true,
  prepare: async (args, io) => {
    const name = args.positional("NAME") ?? "";
    const problems: string[] = [];
    const spec = specFromFlags(
      args,
      { repo: "", paths: [], pollIntervalSeconds: 0 },
      problems,
    );
    const credentials = await readCredentials(io, args, problems);
    if (problems.length === 0)
      problems.push(
        ...checkRequest(
          { name, spec, ...(credentials === undefined ? {} : { credentials }) },
          givenFlags(args, name),
        ),
      );
    if (problems.length > 0)
      return refused(problems.map((p) => usageMessage(`${NOUN} add`, p)));
    return prepared<AddInput>({
      name,
      request: {
        name,
        spec,
        ...(credentials === undefined
          ? {}
          : { credentials: gitCredentialsToWire(credentials) }),
      },
    });
  },
  run: async (ctx, input) => {
    const answer = await ctx.hub.call("addGitRepo", {
      ...input.request,
      reason: ctx.reason,
    });
    printRepo(
      ctx,
      answer,
      `Git repository ${input.name} added; the hub syncs it now (flotilla gitrepo get ${input.name} --watch).`,
    );
    return EXIT_OK;
  },
});

interface UpdateInput {
  readonly name: string;
  readonly args: ParsedArgs;
}

const update = adminCommand({
  name: `${NOUN} update`,
  summary: "change a git repository",
  description: [
    "Changes the settings given and keeps the others. --branch replaces a pinned --revision and",
    "the other way round; --strategy '' removes the update strategy. New credentials replace the",
    "stored ones; --remove-credentials removes them; without either they are kept.",
  ].join("\n"),
  positionals: [NAME],
  options: {
    ...GITREPO_SPEC_OPTIONS,
    "remove-credentials": {
      type: "boolean",
      description: "remove the stored credentials (a public repository)",
    },
  },
  output: OUTPUT,
  mutating: true,
  prepare: (args) =>
    prepared<UpdateInput>({ name: args.positional("NAME") ?? "", args }),
  run: async (ctx, { name, args }) => {
    // Files are read first: a bad file refuses the command before the hub is asked anything.
    const problems: string[] = [];
    const credentials = await readCredentials(ctx.io, args, problems);
    if (problems.length > 0) return usage(ctx, "update", problems);
    const current = await ctx.hub.call("getGitRepo", { name });
    const stored = present(
      present(current.repo, "git repository").spec,
      "git repository spec",
    );
    const spec = specFromFlags(args, stored, problems);
    const removeCredentials = args.flag("remove-credentials");
    if (problems.length === 0)
      problems.push(
        ...checkRequest(
          {
            name,
            spec,
            removeCredentials,
            ...(credentials === undefined ? {} : { credentials }),
          },
          givenFlags(args, name),
        ),
      );
    if (problems.length > 0) return usage(ctx, "update", problems);
    const answer = await ctx.hub.call("updateGitRepo", {
      name,
      spec,
      removeCredentials,
      reason: ctx.reason,
      ...(credentials === undefined
        ? {}
        : { credentials: gitCredentialsToWire(credentials) }),
    });
    printRepo(ctx, answer, `Git repository ${name} updated.`);
    return EXIT_OK;
  },
});

const remove = adminCommand({
  name: `${NOUN} delete`,
  summary: "stop following a git repository and delete its bundles",
  description: [
    "Forgets the repository and its credentials. The bundles it made are deleted too (their",
    "resources are removed from the clusters), unless --keep-bundles leaves them as they are.",
  ].join("\n"),
  positionals: [NAME],
  options: {
    "keep-bundles": {
      type: "boolean",
      description: "leave the repository's bundles in place",
    },
  },
  output: OUTPUT,
  mutating: true,
  prepare: (args) =>
    prepared({
      name: args.positional("NAME") ?? "",
      keepBundles: args.flag("keep-bundles"),
    }),
  run: async (ctx, input) => {
    const answer = await ctx.hub.call("deleteGitRepo", {
      ...input,
      reason: ctx.reason,
    });
    if (!printMachine(ctx, answer))
      printLines(ctx.io, [
        `Git repository ${input.name} deleted${input.keepBundles ? "; its bundles were kept" : " with its bundles"}.`,
      ]);
    return EXIT_OK;
  },
});

const list = adminCommand({
  name: `${NOUN} list`,
  summary: "list the git repositories",
  description:
    "Lists every repository with what it follows, the commit deployed, how many of its bundles\n" +
    "are Ready everywhere, the last sync and the last error.",
  output: OUTPUT,
  prepare: () => prepared(undefined),
  run: async (ctx) => {
    const repos = await listAll(async (pageToken) => {
      const page = await ctx.hub.call("listGitRepos", { pageToken });
      return { items: page.repos, nextPageToken: page.nextPageToken };
    });
    if (!printMachine(ctx, { repos }))
      printLines(
        ctx.io,
        gitRepoListLines(repos.map(gitRepoFromWire), ctx.render, ctx.io.now()),
      );
    return EXIT_OK;
  },
});

/** Follows WatchGitRepo, redrawing, until the repository settles (or forever with --follow). */
async function watch(ctx: AdminContext, name: string): Promise<number> {
  const format = formatOf(ctx);
  const tty = ctx.io.isTTY && format === "table";
  const follow = ctx.args.flag("follow");
  let last: GitRepoView | undefined;
  try {
    const events = ctx.hub.stream<wire.WatchGitRepoResponse__Output>(
      (admin, metadata) => admin.watchGitRepo({ name }, metadata),
    );
    for await (const event of events) {
      if (event.repo === null) continue;
      last = gitRepoFromWire(event.repo);
      if (format === "json") printJsonLine(ctx.io, event);
      else if (format === "yaml")
        ctx.io.stdout(`---\n${stringify(plainJson(event))}`);
      else {
        const lines = gitRepoLines(last, ctx.render, ctx.io.now());
        ctx.io.stdout(
          tty
            ? `${CLEAR_SCREEN}${lines.join("\n")}\n`
            : `${lines.join("\n")}\n\n`,
        );
      }
      if (!follow && gitRepoSettled(last)) return EXIT_OK;
    }
  } catch (error) {
    if (
      last === undefined ||
      !(error instanceof FlotillaError) ||
      error.code !== "unavailable"
    )
      throw error;
    ctx.io.stderr(
      `flotilla: lost the hub at ${ctx.hub.address} while watching git repository ${name}: ${error.message}\n`,
    );
    return EXIT_UNREACHABLE;
  }
  ctx.io.stderr(
    `flotilla: the hub ended the watch of git repository ${name} before it settled\n`,
  );
  return EXIT_UNREACHABLE;
}

const get = adminCommand({
  name: `${NOUN} get`,
  summary: "show a git repository and its bundles; --watch follows it",
  description: [
    "Shows what the repository follows, the newest commit seen and the one deployed, the last",
    "sync, the last error, the kind of credentials (never the credentials), and a table of the",
    "bundles its directories made: revision, targets Ready, summary.",
    "With --watch, redraws at every change until the deployed commit is the newest seen and every",
    "bundle is Ready on all its targets (exit 0), or forever with --follow; exit 3 when the hub",
    "goes away. With -o json, one JSON status per line.",
  ].join("\n"),
  positionals: [NAME],
  options: {
    watch: {
      type: "boolean",
      short: "w",
      description: "follow the repository until its bundles are Ready",
    },
    follow: {
      type: "boolean",
      description: "with --watch: keep following after that",
    },
  },
  output: OUTPUT,
  prepare: (args) => {
    if (args.flag("follow") && !args.flag("watch"))
      return refused([usageMessage(`${NOUN} get`, "--follow: needs --watch")]);
    return prepared(args.positional("NAME") ?? "");
  },
  run: async (ctx, name) => {
    if (ctx.args.flag("watch")) return watch(ctx, name);
    printRepo(ctx, await ctx.hub.call("getGitRepo", { name }));
    return EXIT_OK;
  },
});

const sync = adminCommand({
  name: `${NOUN} sync`,
  summary: "look for a new commit now",
  description:
    "Makes the hub look for a new commit now, apply it, and answer with the repository's status\n" +
    "after that attempt (its last error when it failed).",
  positionals: [NAME],
  output: OUTPUT,
  mutating: true,
  prepare: (args) => prepared(args.positional("NAME") ?? ""),
  run: async (ctx, name) => {
    const answer = await ctx.hub.call("syncGitRepo", {
      name,
      reason: ctx.reason,
    });
    printRepo(ctx, answer, `Git repository ${name} synced.`);
    return EXIT_OK;
  },
});

/** `flotilla gitrepo …`. */
export const gitRepoNoun: Noun = {
  name: NOUN,
  summary:
    "git repositories the hub follows, making bundles of their directories",
  verbs: [add, update, remove, list, get, sync],
};
