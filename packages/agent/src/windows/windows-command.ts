/**
 * `flotilla-agent windows show|set FILE|freeze|clear`: the cluster owner's command for the
 * maintenance ConfigMap (key `windows.yaml`, see windows-document.ts). It edits the ConfigMap by
 * server-side apply of that one key (field manager `flotilla-agent-windows`, forced: the owner's
 * edit wins over Helm's initial value), refuses content core's schema rejects (nothing is
 * written), and prints the next openings per scope. The agent's watch picks the change up at once.
 * Installed as a kubectl plugin through a `kubectl-flotilla_windows` shim (docs/agent.md).
 */
import { readFile } from "node:fs/promises";
import { delimiter } from "node:path";
import { parseArgs } from "node:util";
import {
  FlotillaError,
  formatProblem,
  WINDOW_SCOPES,
  type Problem,
  compact,
} from "@flotilla/core";
import { createKubeClient, type KubeClient } from "../kube/kube-client.js";
import { loadKubeConfig } from "../kube/kube-config.js";
import {
  ANY_TIME_DOCUMENT,
  parseWindowsDocument,
  withFreeze,
  withoutFreezes,
  WINDOWS_KEY,
} from "./windows-document.js";
import { describeOpenings, isoMinute } from "./windows-show.js";

/** `flotilla-agent windows --help`. */
export const WINDOWS_USAGE = `Usage: flotilla-agent windows COMMAND [flags]
       kubectl flotilla-windows COMMAND [flags]     (with the kubectl-flotilla_windows shim)

Edits the cluster owner's maintenance windows and freezes (ConfigMap key ${WINDOWS_KEY}) and prints
when each scope (kubernetes, nodeImage, workloads) next opens.

Commands:
  show                       print the windows, freezes and next openings
  set FILE                   replace the windows with FILE (YAML: maintenance: {...})
  freeze --until T [--scope S]... [--from T] [--reason R]
                             add a freeze; T is a date (2026-12-31, whole day) or a timestamp;
                             --from defaults to now, --scope (repeatable or comma-separated) to all
  clear [--freezes]          allow any time (or, with --freezes, drop only the freezes)

Flags:
  --kubeconfig FILE          [KUBECONFIG] (default: in-cluster service account)
  -n, --namespace NS         the agent's namespace [FLOTILLA_NAMESPACE] (default: the context's, else flotilla)
  --configmap NAME           [FLOTILLA_WINDOWS_CONFIGMAP] (default flotilla-agent-windows)
  -h, --help                 this text
`;

/** What the command touches of the outside world. */
export interface WindowsCommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly signal: AbortSignal;
  /** Epoch ms; default Date.now (tests pin it). */
  readonly now?: () => number;
}

const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

class UsageError extends Error {}

const unset = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === "" ? undefined : v;

/** Runs `flotilla-agent windows ARGV`; resolves to the exit code. */
export async function runWindowsCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: WindowsCommandIo,
): Promise<number> {
  try {
    return await run(argv, env, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`flotilla-agent windows: ${error.message}\n`);
      return EXIT_USAGE;
    }
    const failure = FlotillaError.from(error);
    io.stderr(`flotilla-agent windows: ${failure.message}\n`);
    return failure.code === "invalid_argument" ? EXIT_USAGE : EXIT_FAILED;
  }
}

function parse(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        kubeconfig: { type: "string" },
        namespace: { type: "string", short: "n" },
        configmap: { type: "string" },
        scope: { type: "string", multiple: true },
        until: { type: "string" },
        from: { type: "string" },
        reason: { type: "string" },
        freezes: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError(
      `${error instanceof Error ? error.message : String(error)} (see --help)`,
    );
  }
}

function refused(what: string, problems: readonly Problem[]): FlotillaError {
  return new FlotillaError(
    "invalid_argument",
    `Cannot ${what}: ${problems.map(formatProblem).join("; ")}; nothing was written`,
    { problems },
  );
}

async function run(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: WindowsCommandIo,
): Promise<number> {
  const { values, positionals } = parse(argv);
  const [command, ...rest] = positionals;
  if (values.help === true || command === undefined || command === "help") {
    io.stdout(WINDOWS_USAGE);
    return command === undefined && values.help !== true ? EXIT_USAGE : 0;
  }
  const expected = command === "set" ? 1 : 0;
  if (rest.length !== expected)
    throw new UsageError(
      `"${command}" takes ${expected === 1 ? "one FILE" : "no arguments"} (got ${JSON.stringify(rest)})`,
    );
  const kubeconfig =
    unset(values.kubeconfig) ?? unset(env.KUBECONFIG)?.split(delimiter)[0];
  const kubeConfig = loadKubeConfig(compact({ kubeconfig }));
  const namespace =
    unset(values.namespace) ??
    unset(env.FLOTILLA_NAMESPACE) ??
    unset(
      kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace,
    ) ??
    "flotilla";
  const name =
    unset(values.configmap) ??
    unset(env.FLOTILLA_WINDOWS_CONFIGMAP) ??
    "flotilla-agent-windows";
  const client = createKubeClient(kubeConfig, "flotilla-agent-windows");
  const where = `ConfigMap "${namespace}/${name}"`;
  const now = (io.now ?? Date.now)();
  const { signal } = io;

  const read = async (): Promise<string | undefined> => {
    const cm = await client.get(
      { apiVersion: "v1", kind: "ConfigMap", namespace, name },
      { signal },
    );
    if (cm === undefined) return undefined;
    const text = (cm.data as Record<string, unknown> | undefined)?.[
      WINDOWS_KEY
    ];
    return typeof text === "string" ? text : "";
  };

  const write = async (text: string, what: string): Promise<number> => {
    const parsed = parseWindowsDocument(text);
    if (!parsed.ok) throw refused(what, parsed.problems);
    await apply(client, { namespace, name, text, signal });
    io.stdout(`Updated ${where} key ${WINDOWS_KEY}.\n`);
    io.stdout(describeOpenings(parsed.value, now));
    return 0;
  };

  switch (command) {
    case "show": {
      const text = await read();
      if (text === undefined) {
        io.stdout(
          `${where} does not exist: no windows, any time is allowed.\n`,
        );
        io.stdout(describeOpenings(undefined, now));
        return 0;
      }
      const parsed = parseWindowsDocument(text);
      if (!parsed.ok) {
        io.stderr(
          `flotilla-agent windows: ${where} key ${WINDOWS_KEY} is invalid (the agent keeps its last valid windows): ${parsed.problems.map(formatProblem).join("; ")}\n`,
        );
        return EXIT_FAILED;
      }
      io.stdout(`${where} key ${WINDOWS_KEY}, at ${isoMinute(now)}:\n`);
      io.stdout(describeOpenings(parsed.value, now));
      return 0;
    }
    case "set": {
      const file = rest[0] ?? "";
      let text: string;
      try {
        text = await readFile(file, { encoding: "utf8", signal });
      } catch (error) {
        throw new UsageError(
          `cannot read "${file}": ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return write(text, `set the windows from "${file}"`);
    }
    case "freeze": {
      const until = unset(values.until);
      if (until === undefined) throw new UsageError("freeze needs --until T");
      const scopes = (values.scope ?? []).flatMap((s) => s.split(","));
      const bad = scopes.find(
        (s) => !(WINDOW_SCOPES as readonly string[]).includes(s),
      );
      if (bad !== undefined)
        throw new UsageError(
          `--scope: "${bad}" is not a scope (scopes: ${WINDOW_SCOPES.join(", ")})`,
        );
      const edited = withFreeze((await read()) ?? "", {
        start:
          unset(values.from) ??
          new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z"),
        end: until,
        ...(scopes.length === 0 ? {} : { scopes }),
        ...compact({ reason: values.reason }),
      });
      if (!edited.ok) throw refused("add the freeze", edited.problems);
      return write(edited.value, "add the freeze");
    }
    case "clear": {
      if (values.freezes !== true)
        return write(ANY_TIME_DOCUMENT, "clear the windows");
      const edited = withoutFreezes((await read()) ?? "");
      if (!edited.ok) throw refused("clear the freezes", edited.problems);
      return write(edited.value, "clear the freezes");
    }
    default:
      throw new UsageError(
        `unknown command "${command}" (commands: show, set, freeze, clear)`,
      );
  }
}

async function apply(
  client: KubeClient,
  target: {
    namespace: string;
    name: string;
    text: string;
    signal: AbortSignal;
  },
): Promise<void> {
  await client.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: target.name, namespace: target.namespace },
      data: { [WINDOWS_KEY]: target.text },
    },
    { force: true, signal: target.signal },
  );
}
