/**
 * The hub's configuration (CONTRIBUTING.md, Config): command-line flags with environment fallbacks
 * (a flag wins; an empty variable counts as unset), each value checked by a zod schema. Every
 * problem is reported at once; its path is where the bad value came from (the flag or the
 * variable), its message names both spellings, and its value is the bad value. main.ts exits
 * with code 2 on problems. This is the only module of the hub that reads the environment, and it
 * reads it through its `env` argument.
 */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { isIP } from "node:net";
import {
  fail,
  ok,
  parseDuration,
  type Problem,
  type Result,
} from "@flotilla/core";
import { z } from "zod";
import type { RefusalAuditSettings } from "./audit/refusal-audit.js";
import { parseByteSize } from "./byte-size.js";
import { LOG_LEVELS, type LogLevel } from "./logger.js";
import {
  HUB_NATS_AUTH_FILES,
  NATS_SETUP_FILES,
} from "./security/nats-setup-files.js";
import { bucketPrefixProblem } from "./store/keys.js";

/**
 * gRPC over TLS (paths, read by main.ts). Client certificates (agents, admins) chain to the hub's
 * CA: the operator's (`caCertFile`/`caKeyFile`), else the one in the state store.
 */
export interface HubTlsConfig {
  /** The serving certificate and key; absent: the hub issues its own from its CA for `sans`. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** An operator-supplied CA (both or neither); absent: the CA kept in the state store. */
  readonly caCertFile?: string;
  readonly caKeyFile?: string;
  /** DNS names and IP addresses of the serving certificate the hub issues itself. */
  readonly sans: readonly string[];
  /** Where to write the CA certificate at start, for CLIs and agents to trust. */
  readonly writeCaFile?: string;
  /** Lifetime of the cluster certificates registration issues. */
  readonly clusterCertTtlMs: number;
}

/** The settings of a hub that is to run. */
export interface HubSettings {
  readonly help: false;
  /** gRPC (AdminService + AgentService), `HOST:PORT`. */
  readonly listen: string;
  /** `/metrics` and `/healthz`, `HOST:PORT`; undefined when `--http-listen off`. */
  readonly httpListen: string | undefined;
  /** NATS server URLs, tried in turn. */
  readonly nats: readonly string[];
  /** Prefix of every bucket and stream of hub state. */
  readonly statePrefix: string;
  readonly heartbeatIntervalMs: number;
  /** Heartbeats an agent may miss before it is Unreachable. */
  readonly missedHeartbeats: number;
  /** How often bundle passes and run ticks happen. */
  readonly passIntervalMs: number;
  /** The audit stream's size limit (JetStream reserves it), when the hub creates the stream. */
  readonly auditMaxBytes: number;
  /** How long a stop may take before what is left is closed at once. */
  readonly shutdownTimeoutMs: number;
  /** Collecting bundle content nothing references (bundles/content-collector.ts). */
  readonly bundleContentGc: {
    readonly intervalMs: number;
    /** Unreferenced content younger than this is kept (an upload waiting for its apply). */
    readonly graceMs: number;
  };
  readonly logLevel: LogLevel;
  /** The hub's own NATS user (a `.creds` file); undefined: connect without credentials. */
  readonly natsCredsFile: string | undefined;
  /**
   * The directory `flotilla-hub nats-setup` wrote (the hub's users, the agents' account and the
   * keys to mint and revoke agents' users); undefined: agents get no NATS credentials.
   */
  readonly natsAuthDir: string | undefined;
  /** NATS URLs agents are told in their credentials; default the hub's own `nats`. */
  readonly agentNatsServers: readonly string[];
  /** The admin token file (bearer tokens of AdminService callers); undefined when not given. */
  readonly adminTokensFile: string | undefined;
  /** How many refused calls per peer the audit log records one by one (audit/refusal-audit.ts). */
  readonly refusalAudit: RefusalAuditSettings;
}

/** gRPC transport security: plaintext only when asked for explicitly. */
export type HubTransport =
  | { readonly insecurePlaintext: true; readonly tls: undefined }
  | { readonly insecurePlaintext: false; readonly tls: HubTlsConfig };

/** What {@link parseHubConfig} returns: a request for help, or the settings to run with. */
export type HubConfig = { readonly help: true } | (HubSettings & HubTransport);

interface OptionSpec {
  readonly flag: string;
  readonly env?: string;
  readonly arg?: string;
  readonly fallback?: string;
  readonly help: string;
}

const OPTIONS = {
  listen: {
    flag: "--listen",
    env: "FLOTILLA_HUB_LISTEN",
    arg: "HOST:PORT",
    fallback: "127.0.0.1:7070",
    help: "gRPC address (AdminService and AgentService)",
  },
  httpListen: {
    flag: "--http-listen",
    env: "FLOTILLA_HUB_HTTP_LISTEN",
    arg: "HOST:PORT|off",
    fallback: "127.0.0.1:7071",
    help: "HTTP address of /metrics and /healthz; off disables it",
  },
  nats: {
    flag: "--nats",
    env: "FLOTILLA_NATS",
    arg: "URL[,URL...]",
    fallback: "nats://127.0.0.1:4222",
    help: "NATS servers (JetStream enabled)",
  },
  natsCreds: {
    flag: "--nats-creds",
    env: "FLOTILLA_NATS_CREDS",
    arg: "FILE",
    help: "the hub's NATS user credentials (hub.creds of flotilla-hub nats-setup)",
  },
  natsAuthDir: {
    flag: "--nats-auth-dir",
    env: "FLOTILLA_NATS_AUTH_DIR",
    arg: "DIR",
    help: "the files of flotilla-hub nats-setup: the hub connects as hub.creds and mints and revokes agents' NATS users",
  },
  agentNatsServers: {
    flag: "--agent-nats-servers",
    env: "FLOTILLA_AGENT_NATS_SERVERS",
    arg: "URL[,URL...]",
    help: "NATS servers agents are told to use (default: --nats)",
  },
  statePrefix: {
    flag: "--state-prefix",
    env: "FLOTILLA_STATE_PREFIX",
    arg: "NAME",
    fallback: "flotilla",
    help: "prefix of the hub's buckets and streams",
  },
  insecurePlaintext: {
    flag: "--insecure-plaintext",
    env: "FLOTILLA_INSECURE_PLAINTEXT",
    help: "serve gRPC without TLS (development only)",
  },
  tlsCert: {
    flag: "--tls-cert",
    env: "FLOTILLA_TLS_CERT",
    arg: "FILE",
    help: "server certificate (PEM)",
  },
  tlsKey: {
    flag: "--tls-key",
    env: "FLOTILLA_TLS_KEY",
    arg: "FILE",
    help: "server private key (PEM)",
  },
  tlsCa: {
    flag: "--tls-ca",
    env: "FLOTILLA_TLS_CA",
    arg: "FILE",
    help: "no longer used: client certificates chain to the hub's CA (--ca-cert)",
  },
  caCert: {
    flag: "--ca-cert",
    env: "FLOTILLA_CA_CERT",
    arg: "FILE",
    help: "the operator's CA certificate (PEM), with --ca-key; default: the hub's stored CA",
  },
  caKey: {
    flag: "--ca-key",
    env: "FLOTILLA_CA_KEY",
    arg: "FILE",
    help: "the operator's CA private key (PEM)",
  },
  tlsSan: {
    flag: "--tls-san",
    env: "FLOTILLA_TLS_SAN",
    arg: "NAME[,NAME...]",
    help: "DNS names and IPs of the serving certificate the hub issues itself (default localhost,127.0.0.1 and the --listen host)",
  },
  writeCa: {
    flag: "--write-ca",
    env: "FLOTILLA_WRITE_CA",
    arg: "FILE",
    help: "write the CA certificate (PEM) to FILE at start, for CLIs and agents",
  },
  clusterCertTtl: {
    flag: "--cluster-cert-ttl",
    env: "FLOTILLA_CLUSTER_CERT_TTL",
    arg: "DURATION",
    fallback: "30d",
    help: "lifetime of the cluster certificates agents get when they register",
  },
  adminTokens: {
    flag: "--admin-tokens",
    env: "FLOTILLA_HUB_ADMIN_TOKENS",
    arg: "FILE",
    help: "admin bearer tokens (YAML list of name, role, tokenSha256), re-read on change",
  },
  heartbeatInterval: {
    flag: "--heartbeat-interval",
    env: "FLOTILLA_HEARTBEAT_INTERVAL",
    arg: "DURATION",
    fallback: "10s",
    help: "how often agents send heartbeats",
  },
  missedHeartbeats: {
    flag: "--missed-heartbeats",
    env: "FLOTILLA_MISSED_HEARTBEATS",
    arg: "N",
    fallback: "3",
    help: "missed heartbeats before an agent is Unreachable",
  },
  passInterval: {
    flag: "--pass-interval",
    env: "FLOTILLA_PASS_INTERVAL",
    arg: "DURATION",
    fallback: "5s",
    help: "how often bundle passes and run ticks happen",
  },
  auditRefusalsPerPeer: {
    flag: "--audit-refusals-per-peer",
    env: "FLOTILLA_AUDIT_REFUSALS_PER_PEER",
    arg: "N",
    fallback: "100",
    help: "refused calls per peer and window recorded one by one in the audit log; more are counted in a summary record",
  },
  auditRefusalsWindow: {
    flag: "--audit-refusals-window",
    env: "FLOTILLA_AUDIT_REFUSALS_WINDOW",
    arg: "DURATION",
    fallback: "1m",
    help: "the window of --audit-refusals-per-peer",
  },
  auditRefusalsPeers: {
    flag: "--audit-refusals-peers",
    env: "FLOTILLA_AUDIT_REFUSALS_PEERS",
    arg: "N",
    fallback: "10000",
    help: "peers counted apart at a time (the limiter's memory); refusals of further peers share one count",
  },
  auditMaxBytes: {
    flag: "--audit-max-bytes",
    env: "FLOTILLA_AUDIT_MAX_BYTES",
    arg: "SIZE",
    fallback: "1GiB",
    help: "size limit of the audit stream, reserved in JetStream when the hub creates it",
  },
  shutdownTimeout: {
    flag: "--shutdown-timeout",
    env: "FLOTILLA_SHUTDOWN_TIMEOUT",
    arg: "DURATION",
    fallback: "10s",
    help: "how long a stop may take before what is left is closed at once",
  },
  bundleContentGcInterval: {
    flag: "--bundle-content-gc-interval",
    env: "FLOTILLA_BUNDLE_CONTENT_GC_INTERVAL",
    arg: "DURATION",
    fallback: "10m",
    help: "how often bundle content that nothing references is collected",
  },
  bundleContentGcGrace: {
    flag: "--bundle-content-gc-grace",
    env: "FLOTILLA_BUNDLE_CONTENT_GC_GRACE",
    arg: "DURATION",
    fallback: "1h",
    help: "how long unreferenced bundle content is kept (an upload waiting for its apply)",
  },
  logLevel: {
    flag: "--log-level",
    env: "FLOTILLA_LOG_LEVEL",
    arg: "LEVEL",
    fallback: "info",
    help: LOG_LEVELS.join("|"),
  },
  help: { flag: "--help", help: "print this help and exit (also -h)" },
} as const satisfies Record<string, OptionSpec>;

type OptionName = keyof typeof OPTIONS;

/** Flags of earlier versions, and what to do instead. */
const REPLACED_FLAGS: Readonly<Record<string, string>> = {
  "--nats-account-signing-key":
    "was replaced by --nats-auth-dir: agents now have a NATS account of their own; run flotilla-hub nats-setup --from OLD_DIR --out NEW_DIR and pass --nats-auth-dir NEW_DIR (docs/security.md)",
};
const BOOLEAN_OPTIONS: ReadonlySet<OptionName> = new Set([
  "insecurePlaintext",
  "help",
]);

/** The hub's usage text, with every flag, its variable and its default. */
export const HUB_USAGE: string = [
  "Usage: flotilla-hub [flags]",
  "       flotilla-hub nats-setup --out DIR   (once: NATS operator, accounts and the hub's credentials;",
  "                                            flotilla-hub nats-setup --help)",
  "",
  "Flags (each also read from the environment variable shown; a flag wins):",
  ...Object.values(OPTIONS).map((o: OptionSpec) => {
    const left = `  ${o.flag}${o.arg === undefined ? "" : ` ${o.arg}`}`;
    const env = o.env === undefined ? "" : ` [${o.env}]`;
    const fallback = o.fallback === undefined ? "" : ` (default ${o.fallback})`;
    return `${left.padEnd(34)} ${o.help}${fallback}${env}`;
  }),
  "",
  "Durations: 500ms, 10s, 1m, 1h, 30d, or sums like 1m30s. gRPC serves TLS with the hub's CA (made",
  "on the first start and kept in the state store, or --ca-cert/--ca-key) unless --insecure-plaintext.",
  "Admin callers present an admin client certificate (TLS) or a bearer token from --admin-tokens;",
  "a plaintext hub without --admin-tokens is insecure development mode: every caller is admin.",
  "docs/security.md explains the set-up.",
].join("\n");

// ---- Value schemas: strings in, typed values out; messages say what a good value looks like.

// Smaller would not hold a few records of the largest size the stream accepts (16 KiB).
const MIN_AUDIT_MAX_BYTES = 1024 * 1024;

const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const HOST_PORT =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

const hostPort = z.string().refine((v) => {
  const port = HOST_PORT.exec(v)?.[1];
  return port !== undefined && Number(port) <= 65535;
}, "must be HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:7070 or [::1]:7070");

const natsUrl = z.string().refine((v) => {
  if (!v.includes("://")) return HOST_PORT.test(v);
  try {
    const url = new URL(v);
    return (
      (url.protocol === "nats:" || url.protocol === "tls:") &&
      url.hostname !== ""
    );
  } catch {
    return false;
  }
}, "must be nats://HOST:PORT, tls://HOST:PORT or HOST:PORT (several separated by commas)");

function duration(minMs: number, maxMs: number) {
  return z.string().transform((v, ctx) => {
    const parsed = parseDuration(v);
    if (!parsed.ok || parsed.ms < minMs || parsed.ms > maxMs) {
      ctx.addIssue({
        code: "custom",
        message: `must be a duration from ${String(minMs)}ms to ${String(maxMs / 3_600_000)}h, like 500ms, 10s or 1m`,
      });
      return z.NEVER;
    }
    return parsed.ms;
  });
}

/** A whole number from `min` to `max`, written without a sign or separators. */
function wholeNumber(min: number, max: number) {
  const message = `must be a whole number from ${String(min)} to ${String(max)}`;
  return z
    .string()
    .regex(/^\d{1,9}$/, message)
    .transform(Number)
    .refine((n) => n >= min && n <= max, message);
}

const natsUrls = z.string().transform((v, ctx) => {
  const urls = v.split(",").map((u) => u.trim());
  for (const url of urls) {
    if (!natsUrl.safeParse(url).success) {
      ctx.addIssue({
        code: "custom",
        message: `"${url}" ${natsUrl.safeParse(url).error?.issues[0]?.message ?? "is not a NATS URL"}`,
      });
    }
  }
  return urls;
});

const schemas = {
  listen: hostPort,
  httpListen: z.union([z.literal("off").transform(() => undefined), hostPort]),
  nats: natsUrls,
  natsCreds: z.string(),
  natsAuthDir: z.string(),
  agentNatsServers: natsUrls,
  statePrefix: z.string().superRefine((v, ctx) => {
    const problem = bucketPrefixProblem(v);
    if (problem !== undefined)
      ctx.addIssue({ code: "custom", message: problem });
  }),
  insecurePlaintext: z.stringbool({
    truthy: ["1", "true", "yes", "on"],
    falsy: ["0", "false", "no", "off"],
  }),
  help: z.stringbool(),
  tlsCert: z.string(),
  tlsKey: z.string(),
  tlsCa: z.string(),
  caCert: z.string(),
  caKey: z.string(),
  tlsSan: z.string().transform((v, ctx) => {
    const names = v.split(",").map((n) => n.trim());
    for (const name of names) {
      if (isIP(name) === 0 && !DNS_NAME.test(name)) {
        ctx.addIssue({
          code: "custom",
          message: `"${name}" is neither a DNS name nor an IP address`,
        });
      }
    }
    return names;
  }),
  writeCa: z.string(),
  clusterCertTtl: duration(60_000, 365 * 24 * 3_600_000),
  adminTokens: z.string(),
  heartbeatInterval: duration(100, 3_600_000),
  missedHeartbeats: z
    .string()
    .regex(/^\d{1,3}$/, "must be a whole number from 1 to 100")
    .transform(Number)
    .refine((n) => n >= 1 && n <= 100, "must be a whole number from 1 to 100"),
  passInterval: duration(100, 3_600_000),
  auditRefusalsPerPeer: wholeNumber(0, 1_000_000),
  auditRefusalsWindow: duration(1_000, 24 * 3_600_000),
  auditRefusalsPeers: wholeNumber(1, 1_000_000),
  auditMaxBytes: z.string().transform((v, ctx) => {
    const bytes = parseByteSize(v);
    if (bytes === undefined || bytes < MIN_AUDIT_MAX_BYTES) {
      ctx.addIssue({
        code: "custom",
        message:
          "must be a size of at least 1MiB: bytes, or a number with KiB, MiB, GiB or TiB, like 256MiB",
      });
      return z.NEVER;
    }
    return bytes;
  }),
  shutdownTimeout: duration(1_000, 3_600_000),
  bundleContentGcInterval: duration(1_000, 24 * 3_600_000),
  bundleContentGcGrace: duration(60_000, 30 * 24 * 3_600_000),
  logLevel: z.enum(LOG_LEVELS, {
    error: `must be one of ${LOG_LEVELS.join(", ")}`,
  }),
} satisfies Record<OptionName, z.ZodType<unknown, string>>;

type Values = { -readonly [K in OptionName]: z.output<(typeof schemas)[K]> };

/** Where an option's value came from: its flag, its variable, or its default. */
type Raw = { readonly value: string; readonly source: string };

function spelled(name: OptionName): string {
  const o: OptionSpec = OPTIONS[name];
  return o.env === undefined ? o.flag : `${o.flag} or ${o.env}`;
}

function closestFlag(flag: string): string | undefined {
  const flags = Object.values(OPTIONS).map((o) => o.flag);
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let prev = row[0] ?? 0;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const cur = row[j] ?? 0;
        row[j] = Math.min(
          cur + 1,
          (row[j - 1] ?? 0) + 1,
          prev + (a[i - 1] === b[j - 1] ? 0 : 1),
        );
        prev = cur;
      }
    }
    return row[b.length] ?? 0;
  };
  const best = flags
    .map((f) => [f, distance(flag, f)] as const)
    .sort((x, y) => x[1] - y[1])[0];
  return best !== undefined && best[1] <= 3 ? best[0] : undefined;
}

/** Reads flags from argv: `--flag value`, `--flag=value`, booleans bare or `--flag=false`. */
function readArgv(
  argv: readonly string[],
  problems: Problem[],
): Map<OptionName, Raw> {
  const byFlag = new Map<string, OptionName>(
    (Object.keys(OPTIONS) as OptionName[]).map((name) => [
      OPTIONS[name].flag,
      name,
    ]),
  );
  byFlag.set("-h", "help");
  const given = new Map<OptionName, Raw>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const name = byFlag.get(flag);
    if (name === undefined) {
      const guess = arg.startsWith("-") ? closestFlag(flag) : undefined;
      problems.push({
        path: arg.startsWith("-") ? flag : "argv",
        message:
          REPLACED_FLAGS[flag] ??
          (arg.startsWith("-")
            ? `unknown flag${guess === undefined ? "" : `; did you mean ${guess}?`} (see --help)`
            : "unexpected argument: the hub takes flags only (see --help)"),
        value: arg,
      });
      continue;
    }
    let value: string | undefined;
    if (flag !== arg) value = arg.slice(eq + 1);
    else if (BOOLEAN_OPTIONS.has(name)) value = "true";
    else if (i + 1 < argv.length && !(argv[i + 1] ?? "").startsWith("--"))
      value = argv[++i];
    if (value === undefined) {
      problems.push({
        path: flag,
        message:
          `needs a value: ${flag} ${(OPTIONS[name] as OptionSpec).arg ?? ""}`.trimEnd(),
      });
      continue;
    }
    if (given.has(name)) {
      problems.push({
        path: OPTIONS[name].flag,
        message: "is given more than once",
        value,
      });
      continue;
    }
    given.set(name, { value, source: OPTIONS[name].flag });
  }
  return given;
}

/**
 * Parses the hub's flags (`argv` without the node and script paths) with `env` as the fallback.
 * `--help` wins over every other problem, so that help is always reachable.
 */
export function parseHubConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<HubConfig> {
  const problems: Problem[] = [];
  const given = readArgv(argv, problems);
  const help = given.get("help");
  if (help !== undefined && schemas.help.safeParse(help.value).data !== false) {
    return ok({ help: true });
  }

  const values: Partial<Values> = {};
  const sources = new Map<OptionName, Raw>();
  for (const name of Object.keys(OPTIONS) as OptionName[]) {
    const spec: OptionSpec = OPTIONS[name];
    const fromEnv = spec.env === undefined ? undefined : env[spec.env];
    const raw: Raw | undefined =
      given.get(name) ??
      (fromEnv !== undefined && fromEnv !== "" && spec.env !== undefined
        ? { value: fromEnv, source: spec.env }
        : spec.fallback === undefined
          ? undefined
          : { value: spec.fallback, source: `the default of ${spec.flag}` });
    if (raw === undefined) continue;
    sources.set(name, raw);
    const parsed = (schemas[name] as z.ZodType<unknown, string>).safeParse(
      raw.value,
    );
    if (parsed.success) {
      (values as Record<string, unknown>)[name] = parsed.data;
    } else {
      for (const issue of parsed.error.issues) {
        problems.push({
          path: raw.source,
          message: `${issue.message} (${spelled(name)})`,
          value: raw.value,
        });
      }
    }
  }

  const transport = checkTransport(values, sources, problems);
  const { listen, httpListen } = values;
  if (
    listen !== undefined &&
    httpListen !== undefined &&
    listen === httpListen &&
    !listen.endsWith(":0")
  ) {
    problems.push({
      path: sources.get("httpListen")?.source ?? OPTIONS.httpListen.flag,
      message: `must differ from the gRPC address (${spelled("listen")}) (${spelled("httpListen")})`,
      value: httpListen,
    });
  }
  if (values.adminTokens !== undefined) {
    const problem = unreadableFile(values.adminTokens);
    if (problem !== undefined) {
      problems.push({
        path: sources.get("adminTokens")?.source ?? OPTIONS.adminTokens.flag,
        message: `${problem} (${spelled("adminTokens")})`,
        value: values.adminTokens,
      });
    }
  }
  checkNatsAuth(values, sources, problems);
  if (problems.length > 0 || transport === undefined) return fail(problems);
  return ok({
    help: false,
    listen: values.listen ?? "",
    httpListen: values.httpListen,
    nats: values.nats ?? [],
    statePrefix: values.statePrefix ?? "",
    heartbeatIntervalMs: values.heartbeatInterval ?? 0,
    missedHeartbeats: values.missedHeartbeats ?? 0,
    passIntervalMs: values.passInterval ?? 0,
    auditMaxBytes: values.auditMaxBytes ?? 0,
    shutdownTimeoutMs: values.shutdownTimeout ?? 0,
    bundleContentGc: {
      intervalMs: values.bundleContentGcInterval ?? 0,
      graceMs: values.bundleContentGcGrace ?? 0,
    },
    logLevel: values.logLevel ?? "info",
    natsCredsFile: values.natsCreds,
    natsAuthDir: values.natsAuthDir,
    agentNatsServers: values.agentNatsServers ?? values.nats ?? [],
    adminTokensFile: values.adminTokens,
    refusalAudit: {
      perPeer: values.auditRefusalsPerPeer ?? 0,
      windowMs: values.auditRefusalsWindow ?? 0,
      maxPeers: values.auditRefusalsPeers ?? 0,
    },
    ...transport,
  });
}

/**
 * Plaintext only when asked for. TLS needs no flag: the hub's CA and a serving certificate it
 * issues itself; `--tls-cert/--tls-key` and `--ca-cert/--ca-key` come in pairs of readable files.
 */
function checkTransport(
  values: Partial<Values>,
  sources: ReadonlyMap<OptionName, Raw>,
  problems: Problem[],
): HubTransport | undefined {
  const where = (name: OptionName): string =>
    sources.get(name)?.source ?? OPTIONS[name].flag;
  const given = (name: OptionName): boolean =>
    values[name] !== undefined &&
    !(sources.get(name)?.source ?? "").startsWith("the default");
  const tlsNames = [
    "tlsCert",
    "tlsKey",
    "tlsCa",
    "caCert",
    "caKey",
    "tlsSan",
    "writeCa",
    "clusterCertTtl",
  ] as const;
  if (values.insecurePlaintext === true) {
    const clashes = tlsNames.filter(given);
    for (const name of clashes) {
      problems.push({
        path: where(name),
        message: `cannot be combined with ${spelled("insecurePlaintext")}: choose TLS or plaintext`,
        value: sources.get(name)?.value,
      });
    }
    return clashes.length === 0
      ? { insecurePlaintext: true, tls: undefined }
      : undefined;
  }
  // A bad --insecure-plaintext value is already reported; TLS problems too would mislead.
  if (
    sources.has("insecurePlaintext") &&
    values.insecurePlaintext === undefined
  )
    return undefined;
  let good = true;
  if (values.tlsCa !== undefined) {
    good = false;
    problems.push({
      path: where("tlsCa"),
      message: `is no longer used: client certificates chain to the hub's CA; pass ${OPTIONS.caCert.flag} and ${OPTIONS.caKey.flag} to supply that CA (${spelled("tlsCa")})`,
      value: values.tlsCa,
    });
  }
  for (const [a, b] of [
    ["tlsCert", "tlsKey"],
    ["caCert", "caKey"],
  ] as const) {
    for (const [name, other] of [
      [a, b],
      [b, a],
    ] as const) {
      if (values[name] === undefined && values[other] !== undefined) {
        good = false;
        problems.push({
          path: OPTIONS[name].flag,
          message: `is required with ${OPTIONS[other].flag} (${spelled(name)})`,
        });
      }
    }
  }
  for (const name of ["tlsCert", "tlsKey", "caCert", "caKey"] as const) {
    const file = values[name];
    const problem = file === undefined ? undefined : unreadableFile(file);
    if (problem !== undefined) {
      good = false;
      problems.push({
        path: where(name),
        message: `${problem} (${spelled(name)})`,
        value: file,
      });
    }
  }
  if (values.tlsSan !== undefined && values.tlsCert !== undefined) {
    good = false;
    problems.push({
      path: where("tlsSan"),
      message: `names the serving certificate the hub issues itself, so it cannot be combined with ${spelled("tlsCert")} (${spelled("tlsSan")})`,
      value: sources.get("tlsSan")?.value,
    });
  }
  if (!good || values.clusterCertTtl === undefined) return undefined;
  const host = (values.listen ?? "")
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "");
  const defaultSans = ["localhost", "127.0.0.1"];
  if (
    host !== "" &&
    !["0.0.0.0", "::"].includes(host) &&
    !defaultSans.includes(host)
  )
    defaultSans.push(host);
  const { tlsCert, tlsKey, caCert, caKey, writeCa } = values;
  return {
    insecurePlaintext: false,
    tls: {
      ...(tlsCert === undefined || tlsKey === undefined
        ? {}
        : { certFile: tlsCert, keyFile: tlsKey }),
      ...(caCert === undefined || caKey === undefined
        ? {}
        : { caCertFile: caCert, caKeyFile: caKey }),
      ...(writeCa === undefined ? {} : { writeCaFile: writeCa }),
      sans: values.tlsSan ?? defaultSans,
      clusterCertTtlMs: values.clusterCertTtl,
    },
  };
}

/** NATS credentials readable: a creds file, or the setup's directory with every file (not both). */
function checkNatsAuth(
  values: Partial<Values>,
  sources: ReadonlyMap<OptionName, Raw>,
  problems: Problem[],
): void {
  const at = (name: "natsCreds" | "natsAuthDir"): string =>
    sources.get(name)?.source ?? OPTIONS[name].flag;
  const creds = values.natsCreds;
  const dir = values.natsAuthDir;
  const credsProblem = creds === undefined ? undefined : unreadableFile(creds);
  if (credsProblem !== undefined) {
    problems.push({
      path: at("natsCreds"),
      message: `${credsProblem} (${spelled("natsCreds")})`,
      value: creds,
    });
  }
  if (dir === undefined) return;
  if (creds !== undefined) {
    problems.push({
      path: at("natsAuthDir"),
      message: `cannot be given with ${spelled("natsCreds")}: the hub connects as the directory's ${NATS_SETUP_FILES.hubCreds}`,
      value: dir,
    });
  }
  for (const name of HUB_NATS_AUTH_FILES) {
    const problem = unreadableFile(join(dir, NATS_SETUP_FILES[name]));
    if (problem !== undefined) {
      problems.push({
        path: at("natsAuthDir"),
        message: `${NATS_SETUP_FILES[name]} in it ${problem} (run flotilla-hub nats-setup --out DIR, or --from OLD_DIR for a directory of an earlier version)`,
        value: dir,
      });
    }
  }
}

/** Why `file` cannot be read as a regular file, or undefined when it can. */
function unreadableFile(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return "must be a regular file";
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? "names a file that does not exist"
      : `cannot be read (${code ?? String(error)})`;
  }
}
