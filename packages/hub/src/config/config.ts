/**
 * The hub's configuration: the flags of config-options.ts with
 * environment fallbacks (a flag wins; an empty variable counts as unset), read by @flotilla/node's
 * option loader, then checked against each other. Every problem is reported at once; its path is
 * where the bad value came from (the flag or the variable), its message names both spellings, and
 * its value is the bad value. main.ts exits with code 2 on problems. This is the only module of the
 * hub that reads the environment, and it reads it through its `env` argument.
 */
import { join } from "node:path";
import { fail, ok, type Problem, type Result, compact } from "@flotilla/core";
import {
  gatherOptions,
  renderOptions,
  spelled,
  unreadableFile,
  type GatheredOptions,
  type OptionValues,
} from "@flotilla/node";
import type { RefusalAuditSettings } from "../audit/refusal-audit.js";
import { HUB_OPTIONS, RETIRED_HUB_FLAGS } from "./config-options.js";
import {
  checkPrometheus,
  type HubPrometheusSettings,
} from "./prometheus-config.js";
import type { LogLevel } from "../logger.js";
import {
  HUB_NATS_AUTH_FILES,
  NATS_SETUP_FILES,
} from "../security/nats-setup-files.js";

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
  /** `/metrics`, `/healthz` and `/readyz`, `HOST:PORT`; undefined when `--http-listen off`. */
  readonly httpListen: string | undefined;
  /** NATS server URLs, tried in turn. */
  readonly nats: readonly string[];
  /** Prefix of every bucket and stream of hub state. */
  readonly statePrefix: string;
  /** Replicas of every bucket, object store and stream the hub creates (1 to 5). */
  readonly jetstreamReplicas: number;
  readonly heartbeatIntervalMs: number;
  /** Heartbeats an agent may miss before it is Unreachable. */
  readonly missedHeartbeats: number;
  /** How often bundle passes and run ticks happen. */
  readonly passIntervalMs: number;
  /** This replica's name (docs/high-availability.md); undefined: host name and listen port. */
  readonly replicaId: string | undefined;
  /** Lifetime of a lease after its last renewal. */
  readonly leaseTtlMs: number;
  /** The audit stream's size limit (JetStream reserves it), when the hub creates the stream. */
  readonly auditMaxBytes: number;
  /** How long a stop may take before what is left is closed at once. */
  readonly shutdownTimeoutMs: number;
  /** Collecting bundle content nothing references (bundles/content-collector.ts). */
  /** The helm binary (a path, or a name looked up on PATH), for Helm bundles. */
  readonly helm: string;
  /** The kubectl binary (a path, or a name looked up on PATH), for Kustomize bundles. */
  readonly kubectl: string;
  /** Earlier revisions each bundle record keeps (docs/semantics.md#rolling-back-a-bundle). */
  readonly bundleRevisionHistory: number;
  readonly bundleContentGc: {
    readonly intervalMs: number;
    /** Unreferenced content younger than this is kept (an upload waiting for its apply). */
    readonly graceMs: number;
  };
  readonly logLevel: LogLevel;
  /** Git repositories as a bundle source (docs/gitops.md). */
  readonly git: {
    /** The git binary. */
    readonly binary: string;
    readonly timeoutMs: number;
    readonly maxBytes: number;
    readonly maxFiles: number;
    readonly concurrency: number;
    /** The webhook secret (`--git-webhook-secret`); undefined: POST /hooks/git answers 404. */
    readonly webhookSecret: string | undefined;
    /** A file holding the webhook secret, read at start. */
    readonly webhookSecretFile: string | undefined;
  };
  /** Charts from repositories and registries (bundles/chart-fetcher.ts). */
  readonly charts: {
    /** The helm binary. */
    readonly helm: string;
    /** The credentials file (bundles/chart-credentials.ts); undefined: public sources only. */
    readonly credentialsFile: string | undefined;
    readonly timeoutMs: number;
  };
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
  /** The Prometheus metric gates query (docs/running.md#prometheus); undefined: none. */
  readonly prometheus: HubPrometheusSettings | undefined;
}

/** gRPC transport security: plaintext only when asked for explicitly. */
export type HubTransport =
  | { readonly insecurePlaintext: true; readonly tls: undefined }
  | { readonly insecurePlaintext: false; readonly tls: HubTlsConfig };

/** What {@link parseHubConfig} returns: a request for help, or the settings to run with. */
export type HubConfig = { readonly help: true } | (HubSettings & HubTransport);

type OptionName = keyof typeof HUB_OPTIONS;
type Values = Partial<OptionValues<typeof HUB_OPTIONS>>;
type Sources = GatheredOptions<typeof HUB_OPTIONS>["sources"];

/** The hub's usage text, with every flag, its variable and its default. */
export const HUB_USAGE: string = [
  "Usage: flotilla-hub [flags]",
  "       flotilla-hub nats-setup --out DIR   (once: NATS operator, accounts and the hub's credentials;",
  "                                            flotilla-hub nats-setup --help)",
  "",
  "Flags (each also read from the environment variable shown; a flag wins):",
  ...renderOptions(HUB_OPTIONS),
  "",
  "Durations: 500ms, 10s, 1m, 1h, 30d, or sums like 1m30s. gRPC serves TLS with the hub's CA (made",
  "on the first start and kept in the state store, or --ca-cert/--ca-key) unless --insecure-plaintext.",
  "Admin callers present an admin client certificate (TLS) or a bearer token from --admin-tokens;",
  "a plaintext hub without --admin-tokens is insecure development mode: every caller is admin.",
  "docs/security.md explains the set-up.",
].join("\n");

function spelledOf(name: OptionName): string {
  return spelled(HUB_OPTIONS[name]);
}

/**
 * Parses the hub's flags (`argv` without the node and script paths) with `env` as the fallback.
 * `--help` wins over every other problem, so that help is always reachable.
 */
export function parseHubConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Result<HubConfig> {
  const gathered = gatherOptions(HUB_OPTIONS, argv, env, {
    positional: "unexpected argument: the hub takes flags only (see --help)",
    retiredFlags: RETIRED_HUB_FLAGS,
  });
  const { values, sources } = gathered;
  if (sources.help !== undefined && values.help !== false) {
    return ok({ help: true });
  }
  const problems: Problem[] = [...gathered.problems];

  const transport = checkTransport(values, sources, problems);
  const { listen, httpListen } = values;
  if (
    listen !== undefined &&
    httpListen !== undefined &&
    listen === httpListen &&
    !listen.endsWith(":0")
  ) {
    problems.push({
      path: sources.httpListen?.from ?? HUB_OPTIONS.httpListen.flag,
      message: `must differ from the gRPC address (${spelledOf("listen")}) (${spelledOf("httpListen")})`,
      value: httpListen,
    });
  }
  if (
    values.gitWebhookSecret !== undefined &&
    values.gitWebhookSecretFile !== undefined
  )
    problems.push({
      path:
        sources.gitWebhookSecretFile?.from ??
        HUB_OPTIONS.gitWebhookSecretFile.flag,
      message: `cannot be combined with ${spelledOf("gitWebhookSecret")}: give the secret once`,
      value: values.gitWebhookSecretFile,
    });
  else if (values.gitWebhookSecret === "")
    problems.push({
      path: sources.gitWebhookSecret?.from ?? HUB_OPTIONS.gitWebhookSecret.flag,
      message: "must not be empty",
    });
  for (const name of [
    "adminTokens",
    "chartCredentials",
    "gitWebhookSecretFile",
  ] as const) {
    const file = values[name];
    const problem = file === undefined ? undefined : unreadableFile(file);
    if (problem !== undefined) {
      problems.push({
        path: sources[name]?.from ?? HUB_OPTIONS[name].flag,
        message: `${problem} (${spelledOf(name)})`,
        value: file,
      });
    }
  }
  checkNatsAuth(values, sources, problems);
  const prometheus = checkPrometheus(values, sources, problems);
  if (problems.length > 0 || transport === undefined) return fail(problems);
  return ok({
    help: false,
    listen: values.listen ?? "",
    httpListen: values.httpListen,
    nats: values.nats ?? [],
    statePrefix: values.statePrefix ?? "",
    jetstreamReplicas: values.jetstreamReplicas ?? 1,
    heartbeatIntervalMs: values.heartbeatInterval ?? 0,
    missedHeartbeats: values.missedHeartbeats ?? 0,
    passIntervalMs: values.passInterval ?? 0,
    replicaId: values.replicaId,
    leaseTtlMs: values.leaseTtl ?? 0,
    auditMaxBytes: values.auditMaxBytes ?? 0,
    shutdownTimeoutMs: values.shutdownTimeout ?? 0,
    helm: values.helm ?? "helm",
    kubectl: values.kubectl ?? "kubectl",
    bundleRevisionHistory: values.bundleRevisionHistory ?? 10,
    bundleContentGc: {
      intervalMs: values.bundleContentGcInterval ?? 0,
      graceMs: values.bundleContentGcGrace ?? 0,
    },
    logLevel: values.logLevel ?? "info",
    git: {
      binary: values.git ?? "git",
      timeoutMs: values.gitTimeout ?? 0,
      maxBytes: values.gitMaxBytes ?? 0,
      maxFiles: values.gitMaxFiles ?? 0,
      concurrency: values.gitSyncConcurrency ?? 1,
      webhookSecret: values.gitWebhookSecret,
      webhookSecretFile: values.gitWebhookSecretFile,
    },
    charts: {
      helm: values.helm ?? "helm",
      credentialsFile: values.chartCredentials,
      timeoutMs: values.chartFetchTimeout ?? 0,
    },
    natsCredsFile: values.natsCreds,
    natsAuthDir: values.natsAuthDir,
    agentNatsServers: values.agentNatsServers ?? values.nats ?? [],
    adminTokensFile: values.adminTokens,
    refusalAudit: {
      perPeer: values.auditRefusalsPerPeer ?? 0,
      windowMs: values.auditRefusalsWindow ?? 0,
      maxPeers: values.auditRefusalsPeers ?? 0,
    },
    prometheus,
    ...transport,
  });
}

/**
 * Plaintext only when asked for. TLS needs no flag: the hub's CA and a serving certificate it
 * issues itself; `--tls-cert/--tls-key` and `--ca-cert/--ca-key` come in pairs of readable files.
 */
function checkTransport(
  values: Values,
  sources: Sources,
  problems: Problem[],
): HubTransport | undefined {
  const where = (name: OptionName): string =>
    sources[name]?.from ?? HUB_OPTIONS[name].flag;
  const given = (name: OptionName): boolean =>
    values[name] !== undefined && sources[name]?.defaulted !== true;
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
        message: `cannot be combined with ${spelledOf("insecurePlaintext")}: choose TLS or plaintext`,
        value: sources[name]?.text,
      });
    }
    return clashes.length === 0
      ? { insecurePlaintext: true, tls: undefined }
      : undefined;
  }
  // A bad --insecure-plaintext value is already reported; TLS problems too would mislead.
  if (
    sources.insecurePlaintext !== undefined &&
    values.insecurePlaintext === undefined
  )
    return undefined;
  let good = true;
  if (values.tlsCa !== undefined) {
    good = false;
    problems.push({
      path: where("tlsCa"),
      message: `is no longer used: client certificates chain to the hub's CA; pass ${HUB_OPTIONS.caCert.flag} and ${HUB_OPTIONS.caKey.flag} to supply that CA (${spelledOf("tlsCa")})`,
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
          path: HUB_OPTIONS[name].flag,
          message: `is required with ${HUB_OPTIONS[other].flag} (${spelledOf(name)})`,
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
        message: `${problem} (${spelledOf(name)})`,
        value: file,
      });
    }
  }
  if (values.tlsSan !== undefined && values.tlsCert !== undefined) {
    good = false;
    problems.push({
      path: where("tlsSan"),
      message: `names the serving certificate the hub issues itself, so it cannot be combined with ${spelledOf("tlsCert")} (${spelledOf("tlsSan")})`,
      value: sources.tlsSan?.text,
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
      ...compact({ writeCaFile: writeCa }),
      sans: values.tlsSan ?? defaultSans,
      clusterCertTtlMs: values.clusterCertTtl,
    },
  };
}

/** NATS credentials readable: a creds file, or the setup's directory with every file (not both). */
function checkNatsAuth(
  values: Values,
  sources: Sources,
  problems: Problem[],
): void {
  const at = (name: "natsCreds" | "natsAuthDir"): string =>
    sources[name]?.from ?? HUB_OPTIONS[name].flag;
  const creds = values.natsCreds;
  const dir = values.natsAuthDir;
  const credsProblem = creds === undefined ? undefined : unreadableFile(creds);
  if (credsProblem !== undefined) {
    problems.push({
      path: at("natsCreds"),
      message: `${credsProblem} (${spelledOf("natsCreds")})`,
      value: creds,
    });
  }
  if (dir === undefined) return;
  if (creds !== undefined) {
    problems.push({
      path: at("natsAuthDir"),
      message: `cannot be given with ${spelledOf("natsCreds")}: the hub connects as the directory's ${NATS_SETUP_FILES.hubCreds}`,
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
