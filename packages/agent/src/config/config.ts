/**
 * The `flotilla-agent` configuration: command-line flags with environment
 * fallbacks (a flag wins), validated with zod, every problem reported at once naming the flag or
 * variable it came from and the value given. Empty values mean unset. This is the only module that
 * reads the environment (it is handed `env`; main.ts passes `process.env`).
 */
import { join } from "node:path";
import { DNS_LABEL, parseDuration, compact } from "@flotilla/core";
import { gatherOptions } from "@flotilla/node";
import { z } from "zod";
import {
  BOOTSTRAP_TOKEN_ENV,
  checkIdentitySettings,
  type IdentityConfig,
} from "./config-identity.js";
import {
  hostPort,
  hubAddresses,
  type ListenAddress,
} from "./config-addresses.js";
import { AGENT_OPTIONS, type AgentOptionKey } from "./config-options.js";
import {
  givenKubernetesSettings,
  parseKubernetesSettings,
  type KubernetesBackendConfig,
  type KubernetesRaw,
} from "./config-kubernetes.js";

export { BOOTSTRAP_TOKEN_ENV };
export type { ListenAddress };
export { UPGRADE_DRIVERS } from "./config-kubernetes.js";
export type {
  KubernetesBackendConfig,
  UpgradeDriverConfig,
} from "./config-kubernetes.js";
export type {
  BootstrapTokenSource,
  IdentityConfig,
} from "./config-identity.js";

/** Levels of the pino logger. */
export const LOG_LEVELS = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
] as const;

/** Where the agent's clusters come from. */
export type BackendConfig =
  | {
      readonly type: "simulated";
      readonly file: string;
      readonly clusterName?: string;
    }
  | { readonly type: "simulatedFleet"; readonly file: string }
  | KubernetesBackendConfig;

/** The validated configuration. */
export interface AgentConfig {
  /**
   * The hub's gRPC addresses, `HOST:PORT` each: one, or one per replica of a hub run as several
   * (the agent moves from one to the next when a connection fails or ends).
   */
  readonly hub: readonly string[];
  readonly transport:
    | { readonly insecurePlaintext: true }
    | {
        readonly tls: {
          readonly caFile: string;
          readonly certFile?: string;
          readonly keyFile?: string;
        };
      };
  /**
   * Present with TLS and no `--tls-cert`: each cluster gets its client certificate and NATS
   * credentials by registering with a bootstrap token.
   */
  readonly identity?: IdentityConfig;
  /** NATS server URLs (a registered identity's own servers win). */
  readonly nats: readonly string[];
  readonly intentsPrefix: string;
  readonly backend: BackendConfig;
  /** Where progress files go; undefined keeps progress in memory only. */
  readonly stateDir?: string;
  /** undefined: `--metrics-listen off`. */
  readonly metricsListen?: ListenAddress;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  /** How often simulated clusters re-read their maintenance files. */
  readonly windowsReloadIntervalMs: number;
}

/** What {@link parseAgentConfig} found. */
export type ConfigResult =
  | { readonly type: "config"; readonly config: AgentConfig }
  | { readonly type: "help" }
  | { readonly type: "version" }
  | { readonly type: "invalid"; readonly problems: readonly string[] };

type Key = AgentOptionKey;

const natsUrls = z.string().transform((raw, ctx): string[] => {
  const urls = raw.split(",").map((s) => s.trim());
  for (const url of urls) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url.includes("://") ? url : `nats://${url}`);
    } catch {
      parsed = undefined;
    }
    if (
      parsed === undefined ||
      !["nats:", "tls:", "ws:", "wss:"].includes(parsed.protocol) ||
      parsed.hostname === ""
    ) {
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(url)} is not a NATS URL (nats://HOST:PORT; several separated by commas)`,
      });
      return z.NEVER;
    }
  }
  return urls;
});

/** `500ms`, `10s`, `1m` → milliseconds (at least 100 ms, at most a day). */
const duration = z.string().transform((raw, ctx): number => {
  const parsed = parseDuration(raw);
  if (!parsed.ok || parsed.value < 100 || parsed.value > 86_400_000) {
    ctx.addIssue({
      code: "custom",
      message: "must be a duration from 100ms to 1d, like 500ms, 10s or 1m",
    });
    return z.NEVER;
  }
  return parsed.value;
});

const schema = z.object({
  hub: hubAddresses.default(["127.0.0.1:7070"]),
  insecurePlaintext: z
    .stringbool({ error: "must be 1/true/yes/on or 0/false/no/off" })
    .default(false),
  tlsCa: z.string().optional(),
  tlsCert: z.string().optional(),
  tlsKey: z.string().optional(),
  identityDir: z.string().optional(),
  bootstrapTokenFile: z.string().optional(),
  nats: natsUrls.default(["nats://127.0.0.1:4222"]),
  intentsPrefix: z
    .string()
    .regex(
      /^[A-Za-z0-9_-]{1,32}$/,
      "must be 1 to 32 letters, digits, '_' or '-'",
    )
    .default("flotilla"),
  clusterName: z
    .string()
    .max(63, "must be at most 63 characters")
    .regex(
      DNS_LABEL,
      "must be a DNS label: lower-case letters, digits and '-', starting and ending alphanumeric",
    )
    .optional(),
  simulated: z.string().optional(),
  simulatedFleet: z.string().optional(),
  stateDir: z.string().optional(),
  metricsListen: z
    .union([z.literal("off"), hostPort(true)], {
      error: "must be HOST:PORT (port 0 picks a free one) or off",
    })
    .default({ host: "127.0.0.1", port: 9464 }),
  logLevel: z
    .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` })
    .default("info"),
  windowsReloadInterval: duration.default(30_000),
});

/** The usage line of the flags, for errors. */
const HINT = "run flotilla-agent --help for usage";

/**
 * Parses the command line (`argv` without node and the script) with `env` as fallback. Never
 * throws: bad input comes back as `invalid` with one line per problem.
 */
export function parseAgentConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ConfigResult {
  const {
    values,
    sources,
    problems: argvProblems,
  } = gatherOptions(AGENT_OPTIONS, argv, env, {
    strict: true,
    emptyValue: "unset",
    trimEnv: true,
    repeated: "last",
  });
  const refused = argvProblems.find((p) => p.path === "argv");
  if (refused !== undefined)
    return { type: "invalid", problems: [`${refused.message}; ${HINT}`] };
  if (sources.help !== undefined) return { type: "help" };
  if (sources.version !== undefined) return { type: "version" };

  // Raw values with where each came from, for messages.
  const raw: Partial<Record<Key, string>> = values;
  const source = (key: Key): string | undefined => sources[key]?.from;
  // Every `--label` value (joined by commas), or the variable's one.
  const labels = raw.labels === undefined ? [] : [raw.labels];
  const where = (key: Key): string => source(key) ?? AGENT_OPTIONS[key].flag;
  const describe = (key: Key): string =>
    raw[key] === undefined
      ? where(key)
      : `${where(key)} ${JSON.stringify(raw[key])}`;

  const parsed = schema.safeParse(raw);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0] as Key;
      problems.push(`${describe(key)}: ${issue.message}`);
    }
  }
  const v = parsed.success ? parsed.data : undefined;

  // Rules across settings.
  const tls = raw.tlsCa !== undefined;
  const plaintextParsed = schema.shape.insecurePlaintext.safeParse(
    raw.insecurePlaintext,
  );
  const plaintext = plaintextParsed.success && plaintextParsed.data;
  if (plaintext && tls)
    problems.push(
      `${where("insecurePlaintext")} and ${where("tlsCa")} contradict each other: choose TLS or plaintext`,
    );
  // A malformed boolean has its own problem above.
  if (plaintextParsed.success && !plaintext && !tls)
    problems.push(
      "Refusing to connect to the hub without TLS: pass --tls-ca FILE (with --tls-cert FILE and --tls-key FILE for mutual TLS), or --insecure-plaintext (FLOTILLA_INSECURE_PLAINTEXT=1) to connect in the clear (development only)",
    );
  if ((raw.tlsCert === undefined) !== (raw.tlsKey === undefined))
    problems.push(
      raw.tlsCert === undefined
        ? `${describe("tlsKey")}: needs --tls-cert as well`
        : `${describe("tlsCert")}: needs --tls-key as well`,
    );
  if (!tls && (raw.tlsCert !== undefined || raw.tlsKey !== undefined))
    problems.push(
      `${where(raw.tlsCert === undefined ? "tlsKey" : "tlsCert")}: needs --tls-ca (the hub's CA certificate) as well`,
    );
  const tokenEnv = env[BOOTSTRAP_TOKEN_ENV]?.trim() ?? "";
  const identityProblems = checkIdentitySettings({
    tls,
    plaintext,
    clientCertificate: raw.tlsCert !== undefined,
    identityDir: raw.identityDir !== undefined,
    // With --kubernetes, a Secret keeps the identity when no directory is given.
    stateDir: raw.stateDir !== undefined || raw.kubernetes !== undefined,
    tokenFile: raw.bootstrapTokenFile !== undefined,
    tokenEnv: tokenEnv !== "",
    where,
  });
  problems.push(...identityProblems);
  const chosen = (
    ["kubernetes", "simulated", "simulatedFleet"] as const
  ).filter((key) => raw[key] !== undefined);
  if (chosen.length > 1)
    problems.push(`${chosen.map(describe).join(" and ")}: choose one`);
  else if (chosen.length === 0)
    problems.push(
      "No cluster to manage: run with --kubernetes in-cluster|KUBECONFIG_FILE and --cluster-name NAME (a real cluster), --simulated CONFIG_FILE (one simulated cluster) or --simulated-fleet FILE (many)",
    );
  const kubeRaw: KubernetesRaw = { values: raw, labels, describe };
  let kubernetes: KubernetesBackendConfig | undefined;
  if (raw.kubernetes === undefined)
    for (const key of givenKubernetesSettings(kubeRaw))
      problems.push(
        `${describe(key)}: applies only with --kubernetes (FLOTILLA_KUBERNETES)`,
      );
  else if (chosen.length === 1) {
    if (raw.clusterName === undefined)
      problems.push(
        `${describe("kubernetes")}: needs --cluster-name NAME (FLOTILLA_CLUSTER_NAME), the cluster's name in the fleet`,
      );
    const settings = parseKubernetesSettings(kubeRaw, v?.clusterName);
    if ("backend" in settings) kubernetes = settings.backend;
    else problems.push(...settings.problems);
  }
  if (raw.identitySecret !== undefined && raw.identityDir !== undefined)
    problems.push(
      `${describe("identitySecret")}: does not apply with ${where("identityDir")}, which keeps the identity in files`,
    );
  if (raw.simulatedFleet !== undefined && raw.clusterName !== undefined)
    problems.push(
      `${describe("clusterName")}: does not apply to ${where("simulatedFleet")}, whose file names its clusters`,
    );

  if (problems.length > 0 || v === undefined)
    return { type: "invalid", problems };
  const backend: BackendConfig =
    kubernetes ??
    (v.simulatedFleet !== undefined
      ? { type: "simulatedFleet", file: v.simulatedFleet }
      : {
          type: "simulated",
          file: v.simulated ?? "",
          ...compact({ clusterName: v.clusterName }),
        });
  return {
    type: "config",
    config: {
      hub: v.hub,
      transport: plaintext
        ? { insecurePlaintext: true }
        : {
            tls: {
              caFile: v.tlsCa ?? "",
              ...compact({ certFile: v.tlsCert, keyFile: v.tlsKey }),
            },
          },
      ...(plaintext || v.tlsCert !== undefined
        ? {}
        : {
            identity: {
              ...(kubernetes !== undefined && v.identityDir === undefined
                ? { secret: kubernetes.identitySecret }
                : {
                    dir: v.identityDir ?? join(v.stateDir ?? "", "identities"),
                  }),
              ...(v.bootstrapTokenFile !== undefined
                ? {
                    bootstrapToken: {
                      type: "file",
                      file: v.bootstrapTokenFile,
                    } as const,
                  }
                : tokenEnv !== ""
                  ? {
                      bootstrapToken: {
                        type: "env",
                        variable: BOOTSTRAP_TOKEN_ENV,
                        value: tokenEnv,
                      } as const,
                    }
                  : {}),
            },
          }),
      nats: v.nats,
      intentsPrefix: v.intentsPrefix,
      backend,
      ...compact({ stateDir: v.stateDir }),
      ...(v.metricsListen === "off" ? {} : { metricsListen: v.metricsListen }),
      logLevel: v.logLevel,
      windowsReloadIntervalMs: v.windowsReloadInterval,
    },
  };
}
