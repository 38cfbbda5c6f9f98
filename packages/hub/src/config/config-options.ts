/**
 * Every flag of `flotilla-hub`, with its environment variable, default, usage line and value
 * parser. config.ts reads this table and checks the options against each other.
 */
import { isIP } from "node:net";
import { ok } from "@flotilla/core";
import {
  byteSize,
  duration,
  list,
  oneOf,
  onOff,
  option,
  parseByteSize,
  refuse,
  text,
  wholeNumber,
  type ValueParser,
} from "@flotilla/node";
import { LOG_LEVELS } from "../logger.js";
import { bucketPrefixProblem } from "../store/keys.js";

// Smaller would not hold a few records of the largest size the stream accepts (16 KiB).
const MIN_AUDIT_MAX_BYTES = 1024 * 1024;

const DNS_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

const HOST_PORT =
  /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

const hostPort: ValueParser<string> = (value) => {
  const port = HOST_PORT.exec(value)?.[1];
  return port !== undefined && Number(port) <= 65535
    ? ok(value)
    : refuse(
        "must be HOST:PORT with a port from 0 to 65535, e.g. 127.0.0.1:7070 or [::1]:7070",
      );
};

const NATS_URL_MESSAGE =
  "must be nats://HOST:PORT, tls://HOST:PORT or HOST:PORT (several separated by commas)";

function isNatsUrl(value: string): boolean {
  if (!value.includes("://")) return HOST_PORT.test(value);
  try {
    const url = new URL(value);
    return (
      (url.protocol === "nats:" || url.protocol === "tls:") &&
      url.hostname !== ""
    );
  } catch {
    return false;
  }
}

const natsUrls = list((url) =>
  isNatsUrl(url) ? ok(url) : refuse<string>(`"${url}" ${NATS_URL_MESSAGE}`),
);

const httpListen: ValueParser<string | undefined> = (value) =>
  value === "off" ? ok(undefined) : hostPort(value);

const statePrefix: ValueParser<string> = (value) => {
  const problem = bucketPrefixProblem(value);
  return problem === undefined ? ok(value) : refuse(problem);
};

const sans = list((name) =>
  isIP(name) !== 0 || DNS_NAME.test(name)
    ? ok(name)
    : refuse<string>(`"${name}" is neither a DNS name nor an IP address`),
);

const MIN_PROMETHEUS_MAX_BYTES = 1024;
const MAX_PROMETHEUS_MAX_BYTES = 64 * 1024 * 1024;

const prometheusMaxBytes: ValueParser<number> = (value) => {
  const bytes = parseByteSize(value);
  return bytes !== undefined &&
    bytes >= MIN_PROMETHEUS_MAX_BYTES &&
    bytes <= MAX_PROMETHEUS_MAX_BYTES
    ? ok(bytes)
    : refuse(
        "must be a size from 1KiB to 64MiB: bytes, or a number with KiB or MiB, like 1MiB",
      );
};

/** The hub's options, in the order usage lists them and problems are reported. */
export const HUB_OPTIONS = {
  listen: option({
    flag: "--listen",
    env: "FLOTILLA_HUB_LISTEN",
    arg: "HOST:PORT",
    default: "127.0.0.1:7070",
    help: "gRPC address (AdminService and AgentService)",
    parse: hostPort,
  }),
  httpListen: option({
    flag: "--http-listen",
    env: "FLOTILLA_HUB_HTTP_LISTEN",
    arg: "HOST:PORT|off",
    default: "127.0.0.1:7071",
    help: "HTTP address of /metrics, /healthz and /readyz; off disables it",
    parse: httpListen,
  }),
  nats: option({
    flag: "--nats",
    env: "FLOTILLA_NATS",
    arg: "URL[,URL...]",
    default: "nats://127.0.0.1:4222",
    help: "NATS servers (JetStream enabled)",
    parse: natsUrls,
  }),
  natsCreds: option({
    flag: "--nats-creds",
    env: "FLOTILLA_NATS_CREDS",
    arg: "FILE",
    help: "the hub's NATS user credentials (hub.creds of flotilla-hub nats-setup)",
    parse: text,
  }),
  natsAuthDir: option({
    flag: "--nats-auth-dir",
    env: "FLOTILLA_NATS_AUTH_DIR",
    arg: "DIR",
    help: "the files of flotilla-hub nats-setup: the hub connects as hub.creds and mints and revokes agents' NATS users",
    parse: text,
  }),
  agentNatsServers: option({
    flag: "--agent-nats-servers",
    env: "FLOTILLA_AGENT_NATS_SERVERS",
    arg: "URL[,URL...]",
    help: "NATS servers agents are told to use (default: --nats)",
    parse: natsUrls,
  }),
  statePrefix: option({
    flag: "--state-prefix",
    env: "FLOTILLA_STATE_PREFIX",
    arg: "NAME",
    default: "flotilla",
    help: "prefix of the hub's buckets and streams",
    parse: statePrefix,
  }),
  jetstreamReplicas: option({
    flag: "--jetstream-replicas",
    env: "FLOTILLA_JETSTREAM_REPLICAS",
    arg: "N",
    default: "1",
    help: "replicas of every bucket, object store and stream the hub creates, 1 to 5; more than 1 needs a NATS cluster (3 servers for 3)",
    parse: wholeNumber(1, 5, 1),
  }),
  insecurePlaintext: option({
    flag: "--insecure-plaintext",
    env: "FLOTILLA_INSECURE_PLAINTEXT",
    help: "serve gRPC without TLS (development only)",
    parse: onOff({
      truthy: ["1", "true", "yes", "on"],
      falsy: ["0", "false", "no", "off"],
    }),
  }),
  tlsCert: option({
    flag: "--tls-cert",
    env: "FLOTILLA_TLS_CERT",
    arg: "FILE",
    help: "server certificate (PEM)",
    parse: text,
  }),
  tlsKey: option({
    flag: "--tls-key",
    env: "FLOTILLA_TLS_KEY",
    arg: "FILE",
    help: "server private key (PEM)",
    parse: text,
  }),
  tlsCa: option({
    flag: "--tls-ca",
    env: "FLOTILLA_TLS_CA",
    arg: "FILE",
    help: "no longer used: client certificates chain to the hub's CA (--ca-cert)",
    parse: text,
  }),
  caCert: option({
    flag: "--ca-cert",
    env: "FLOTILLA_CA_CERT",
    arg: "FILE",
    help: "the operator's CA certificate (PEM), with --ca-key; default: the hub's stored CA",
    parse: text,
  }),
  caKey: option({
    flag: "--ca-key",
    env: "FLOTILLA_CA_KEY",
    arg: "FILE",
    help: "the operator's CA private key (PEM)",
    parse: text,
  }),
  tlsSan: option({
    flag: "--tls-san",
    env: "FLOTILLA_TLS_SAN",
    arg: "NAME[,NAME...]",
    help: "DNS names and IPs of the serving certificate the hub issues itself (default localhost,127.0.0.1 and the --listen host)",
    parse: sans,
  }),
  writeCa: option({
    flag: "--write-ca",
    env: "FLOTILLA_WRITE_CA",
    arg: "FILE",
    help: "write the CA certificate (PEM) to FILE at start, for CLIs and agents",
    parse: text,
  }),
  clusterCertTtl: option({
    flag: "--cluster-cert-ttl",
    env: "FLOTILLA_CLUSTER_CERT_TTL",
    arg: "DURATION",
    default: "30d",
    help: "lifetime of the cluster certificates agents get when they register",
    parse: duration(60_000, 365 * 24 * 3_600_000),
  }),
  adminTokens: option({
    flag: "--admin-tokens",
    env: "FLOTILLA_HUB_ADMIN_TOKENS",
    arg: "FILE",
    help: "admin bearer tokens (YAML list of name, role, tokenSha256), re-read on change",
    parse: text,
  }),
  heartbeatInterval: option({
    flag: "--heartbeat-interval",
    env: "FLOTILLA_HEARTBEAT_INTERVAL",
    arg: "DURATION",
    default: "10s",
    help: "how often agents send heartbeats",
    parse: duration(100, 3_600_000),
  }),
  missedHeartbeats: option({
    flag: "--missed-heartbeats",
    env: "FLOTILLA_MISSED_HEARTBEATS",
    arg: "N",
    default: "3",
    help: "missed heartbeats before an agent is Unreachable",
    parse: wholeNumber(1, 100, 3),
  }),
  passInterval: option({
    flag: "--pass-interval",
    env: "FLOTILLA_PASS_INTERVAL",
    arg: "DURATION",
    default: "5s",
    help: "how often bundle passes and run ticks happen",
    parse: duration(100, 3_600_000),
  }),
  replicaId: option({
    flag: "--replica-id",
    env: "FLOTILLA_HUB_REPLICA_ID",
    arg: "NAME",
    help: "this hub replica's name among the replicas sharing one NATS (default: host name and --listen port); a restarted replica with the same name takes its leases back at once",
    parse: text,
  }),
  leaseTtl: option({
    flag: "--lease-ttl",
    env: "FLOTILLA_LEASE_TTL",
    arg: "DURATION",
    default: "10s",
    help: "how long a replica's lease on a run outlives its last renewal; a failed replica's runs move after this (every replica must use the same)",
    parse: duration(1_000, 300_000),
  }),
  auditRefusalsPerPeer: option({
    flag: "--audit-refusals-per-peer",
    env: "FLOTILLA_AUDIT_REFUSALS_PER_PEER",
    arg: "N",
    default: "100",
    help: "refused calls per peer and window recorded one by one in the audit log; more are counted in a summary record",
    parse: wholeNumber(0, 1_000_000),
  }),
  auditRefusalsWindow: option({
    flag: "--audit-refusals-window",
    env: "FLOTILLA_AUDIT_REFUSALS_WINDOW",
    arg: "DURATION",
    default: "1m",
    help: "the window of --audit-refusals-per-peer",
    parse: duration(1_000, 24 * 3_600_000),
  }),
  auditRefusalsPeers: option({
    flag: "--audit-refusals-peers",
    env: "FLOTILLA_AUDIT_REFUSALS_PEERS",
    arg: "N",
    default: "10000",
    help: "peers counted apart at a time (the limiter's memory); refusals of further peers share one count",
    parse: wholeNumber(1, 1_000_000),
  }),
  auditMaxBytes: option({
    flag: "--audit-max-bytes",
    env: "FLOTILLA_AUDIT_MAX_BYTES",
    arg: "SIZE",
    default: "1GiB",
    help: "size limit of the audit stream, reserved in JetStream when the hub creates it",
    parse: byteSize(
      MIN_AUDIT_MAX_BYTES,
      "must be a size of at least 1MiB: bytes, or a number with KiB, MiB, GiB or TiB, like 256MiB",
    ),
  }),
  shutdownTimeout: option({
    flag: "--shutdown-timeout",
    env: "FLOTILLA_SHUTDOWN_TIMEOUT",
    arg: "DURATION",
    default: "10s",
    help: "how long a stop may take before what is left is closed at once",
    parse: duration(1_000, 3_600_000),
  }),
  bundleContentGcInterval: option({
    flag: "--bundle-content-gc-interval",
    env: "FLOTILLA_BUNDLE_CONTENT_GC_INTERVAL",
    arg: "DURATION",
    default: "10m",
    help: "how often bundle content that nothing references is collected",
    parse: duration(1_000, 24 * 3_600_000),
  }),
  bundleContentGcGrace: option({
    flag: "--bundle-content-gc-grace",
    env: "FLOTILLA_BUNDLE_CONTENT_GC_GRACE",
    arg: "DURATION",
    default: "1h",
    help: "how long unreferenced bundle content is kept (an upload waiting for its apply)",
    parse: duration(60_000, 30 * 24 * 3_600_000),
  }),
  bundleRevisionHistory: option({
    flag: "--bundle-revision-history",
    env: "FLOTILLA_BUNDLE_REVISION_HISTORY",
    arg: "N",
    default: "10",
    help: "earlier revisions each bundle keeps to roll back to (0: none; docs/semantics.md#rolling-back-a-bundle)",
    parse: wholeNumber(0, 1_000),
  }),
  helm: option({
    flag: "--helm",
    env: "FLOTILLA_HELM",
    arg: "PATH",
    default: "helm",
    help: "the helm binary (3.17 or later) that fetches, packages and trial-renders Helm bundles' charts (docs/bundles.md#helm-bundles)",
    parse: text,
  }),
  kubectl: option({
    flag: "--kubectl",
    env: "FLOTILLA_KUBECTL",
    arg: "PATH",
    default: "kubectl",
    help: "the kubectl binary whose `kubectl kustomize` renders Kustomize bundles (docs/bundles.md#kustomize-bundles)",
    parse: text,
  }),
  chartCredentials: option({
    flag: "--chart-credentials",
    env: "FLOTILLA_CHART_CREDENTIALS",
    arg: "FILE",
    help: "credentials of private chart repositories and registries (YAML list of url, username, password or passwordFile, caFile, insecureSkipTLSVerify, plainHttp; docs/install.md)",
    parse: text,
  }),
  chartFetchTimeout: option({
    flag: "--chart-fetch-timeout",
    env: "FLOTILLA_CHART_FETCH_TIMEOUT",
    arg: "DURATION",
    default: "2m",
    help: "how long fetching one chart from a repository or registry may take",
    parse: duration(1_000, 3_600_000),
  }),
  git: option({
    flag: "--git",
    env: "FLOTILLA_GIT",
    arg: "PATH",
    default: "git",
    help: "the git binary that reads GitRepos (docs/gitops.md)",
    parse: text,
  }),
  gitTimeout: option({
    flag: "--git-timeout",
    env: "FLOTILLA_GIT_TIMEOUT",
    arg: "DURATION",
    default: "1m",
    help: "how long one git command of a GitRepo sync (ls-remote, fetch, checkout) may take before it is killed",
    parse: duration(1_000, 3_600_000),
  }),
  gitMaxBytes: option({
    flag: "--git-max-bytes",
    env: "FLOTILLA_GIT_MAX_BYTES",
    arg: "SIZE",
    default: "256MiB",
    help: "most a GitRepo checkout may fetch, and most its files may hold",
    parse: byteSize(
      1024 * 1024,
      "must be a size of at least 1MiB: bytes, or a number with KiB, MiB, GiB or TiB, like 256MiB",
    ),
  }),
  gitMaxFiles: option({
    flag: "--git-max-files",
    env: "FLOTILLA_GIT_MAX_FILES",
    arg: "N",
    default: "10000",
    help: "most files a GitRepo checkout may hold",
    parse: wholeNumber(1, 10_000_000),
  }),
  gitSyncConcurrency: option({
    flag: "--git-sync-concurrency",
    env: "FLOTILLA_GIT_SYNC_CONCURRENCY",
    arg: "N",
    default: "4",
    help: "GitRepos synced at the same time",
    parse: wholeNumber(1, 64),
  }),
  gitWebhookSecret: option({
    flag: "--git-webhook-secret",
    env: "FLOTILLA_GIT_WEBHOOK_SECRET",
    arg: "SECRET",
    help: "enables POST /hooks/git on --http-listen: requests must be signed with it (GitHub) or carry it (GitLab); prefer the variable or --git-webhook-secret-file",
    parse: text,
  }),
  gitWebhookSecretFile: option({
    flag: "--git-webhook-secret-file",
    env: "FLOTILLA_GIT_WEBHOOK_SECRET_FILE",
    arg: "FILE",
    help: "a file holding the webhook secret (instead of --git-webhook-secret)",
    parse: text,
  }),
  prometheusUrl: option({
    flag: "--prometheus-url",
    env: "FLOTILLA_PROMETHEUS_URL",
    arg: "URL",
    help: "the Prometheus (or compatible) HTTP API that metric gates query, http:// or https://, maybe with a path prefix; no credentials in it (docs/running.md#prometheus)",
    // Checked in prometheus-config.ts, which can quote it without a password it may hold.
    parse: text,
  }),
  prometheusBearerTokenFile: option({
    flag: "--prometheus-bearer-token-file",
    env: "FLOTILLA_PROMETHEUS_BEARER_TOKEN_FILE",
    arg: "FILE",
    help: "a file holding the bearer token sent to --prometheus-url, read at start",
    parse: text,
  }),
  prometheusTimeout: option({
    flag: "--prometheus-timeout",
    env: "FLOTILLA_PROMETHEUS_TIMEOUT",
    arg: "DURATION",
    default: "10s",
    help: "how long one Prometheus query may take, its answer included; a slower one is inconclusive",
    parse: duration(
      1_000,
      300_000,
      "must be a duration from 1s to 5m, like 10s or 1m",
    ),
  }),
  prometheusMaxBytes: option({
    flag: "--prometheus-max-bytes",
    env: "FLOTILLA_PROMETHEUS_MAX_BYTES",
    arg: "SIZE",
    default: "1MiB",
    help: "the largest Prometheus answer read; a larger one is inconclusive",
    parse: prometheusMaxBytes,
  }),
  logLevel: option({
    flag: "--log-level",
    env: "FLOTILLA_LOG_LEVEL",
    arg: "LEVEL",
    default: "info",
    help: LOG_LEVELS.join("|"),
    parse: oneOf(LOG_LEVELS),
  }),
  help: option({
    flag: "--help",
    short: "-h",
    help: "print this help and exit (also -h)",
    parse: onOff(),
  }),
};

/** Flags of earlier versions, and what to do instead. */
export const RETIRED_HUB_FLAGS: Readonly<Record<string, string>> = {
  "--nats-account-signing-key":
    "was replaced by --nats-auth-dir: agents now have a NATS account of their own; run flotilla-hub nats-setup --from OLD_DIR --out NEW_DIR and pass --nats-auth-dir NEW_DIR (docs/security.md)",
};
