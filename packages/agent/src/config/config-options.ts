/**
 * Every flag of `flotilla-agent`, with its environment variable and usage, in the order usage
 * lists them. The values stay text here: config.ts and config-kubernetes.ts validate them.
 */
import { option, text } from "@flotilla/node";
import {
  CLUSTERS_GROUP as CLUSTERS,
  KUBERNETES_OPTIONS as K,
} from "./config-kubernetes.js";

const HUB = "Hub";
const JOINING =
  'Joining the fleet (TLS without --tls-cert; see docs/agent.md "Joining the fleet")';
const INTENTS = "Intents";
const PROCESS = "Process";

/** The agent's options; the Kubernetes backend's come from config-kubernetes.ts. */
export const AGENT_OPTIONS = {
  hub: option({
    flag: "--hub",
    env: "FLOTILLA_HUB",
    arg: "HOST:PORT[,...]",
    group: HUB,
    help: "the hub's gRPC address, or one per hub replica: the agent moves on\nto the next when a connection fails or ends [FLOTILLA_HUB]\n(default 127.0.0.1:7070)",
    parse: text,
  }),
  tlsCa: option({
    flag: "--tls-ca",
    env: "FLOTILLA_TLS_CA",
    arg: "FILE",
    group: HUB,
    help: "verify the hub with this CA certificate (PEM) [FLOTILLA_TLS_CA]",
    parse: text,
  }),
  tlsCert: option({
    flag: "--tls-cert",
    env: "FLOTILLA_TLS_CERT",
    arg: "FILE",
    group: HUB,
    help: "client certificate for mutual TLS [FLOTILLA_TLS_CERT]",
    parse: text,
  }),
  tlsKey: option({
    flag: "--tls-key",
    env: "FLOTILLA_TLS_KEY",
    arg: "FILE",
    group: HUB,
    help: "its private key [FLOTILLA_TLS_KEY]",
    parse: text,
  }),
  insecurePlaintext: option({
    flag: "--insecure-plaintext",
    env: "FLOTILLA_INSECURE_PLAINTEXT",
    group: HUB,
    help: "connect without TLS, development only [FLOTILLA_INSECURE_PLAINTEXT=1]",
    parse: text,
  }),
  identityDir: option({
    flag: "--identity-dir",
    env: "FLOTILLA_IDENTITY_DIR",
    arg: "DIR",
    group: JOINING,
    help: "keep each cluster's identity (key, certificate, NATS credentials) in\nDIR/CLUSTER [FLOTILLA_IDENTITY_DIR] (default STATE_DIR/identities)",
    parse: text,
  }),
  bootstrapTokenFile: option({
    flag: "--bootstrap-token-file",
    env: "FLOTILLA_BOOTSTRAP_TOKEN_FILE",
    arg: "FILE",
    group: JOINING,
    help: "register a cluster that has no valid identity yet with the token in\nFILE (from `flotilla token create`) [FLOTILLA_BOOTSTRAP_TOKEN_FILE];\nor the token itself in FLOTILLA_BOOTSTRAP_TOKEN (there is no flag for\nit: flags show in ps). Used once, never stored.",
    parse: text,
  }),
  nats: option({
    flag: "--nats",
    env: "FLOTILLA_NATS",
    arg: "URL[,URL...]",
    group: INTENTS,
    help: "NATS servers [FLOTILLA_NATS] (default nats://127.0.0.1:4222)",
    parse: text,
  }),
  intentsPrefix: option({
    flag: "--intents-prefix",
    env: "FLOTILLA_INTENTS_PREFIX",
    arg: "PREFIX",
    group: INTENTS,
    help: "bucket and subject prefix, as the hub's [FLOTILLA_INTENTS_PREFIX]\n(default flotilla)",
    parse: text,
  }),
  kubernetes: K.kubernetes,
  clusterName: option({
    flag: "--cluster-name",
    env: "FLOTILLA_CLUSTER_NAME",
    arg: "NAME",
    group: CLUSTERS,
    help: "the cluster's name in the fleet (required with --kubernetes; with\n--simulated, over the file's) [FLOTILLA_CLUSTER_NAME]",
    parse: text,
  }),
  simulated: option({
    flag: "--simulated",
    env: "FLOTILLA_SIMULATED",
    arg: "FILE",
    group: CLUSTERS,
    help: "one simulated cluster (YAML or JSON) [FLOTILLA_SIMULATED]",
    parse: text,
  }),
  simulatedFleet: option({
    flag: "--simulated-fleet",
    env: "FLOTILLA_SIMULATED_FLEET",
    arg: "FILE",
    group: CLUSTERS,
    help: "many simulated clusters, one agent each [FLOTILLA_SIMULATED_FLEET]",
    parse: text,
  }),
  namespace: K.namespace,
  windowsConfigMap: K.windowsConfigMap,
  applyForceConflicts: K.applyForceConflicts,
  labels: K.labels,
  region: K.region,
  supportPlan: K.supportPlan,
  identitySecret: K.identitySecret,
  helm: K.helm,
  upgradeDriver: K.upgradeDriver,
  sucDistribution: K.sucDistribution,
  sucNamespace: K.sucNamespace,
  sucServerPlan: K.sucServerPlan,
  sucAgentPlan: K.sucAgentPlan,
  capiCluster: K.capiCluster,
  capiNamespace: K.capiNamespace,
  stateDir: option({
    flag: "--state-dir",
    env: "FLOTILLA_STATE_DIR",
    arg: "DIR",
    group: PROCESS,
    help: "keep progress in DIR/progress.json across restarts [FLOTILLA_STATE_DIR]\n(default: in memory only)",
    parse: text,
  }),
  metricsListen: option({
    flag: "--metrics-listen",
    env: "FLOTILLA_METRICS_LISTEN",
    arg: "HOST:PORT",
    group: PROCESS,
    help: 'serve /metrics and /healthz, or "off" [FLOTILLA_METRICS_LISTEN]\n(default 127.0.0.1:9464)',
    parse: text,
  }),
  windowsReloadInterval: option({
    flag: "--windows-reload-interval",
    env: "FLOTILLA_WINDOWS_RELOAD_INTERVAL",
    arg: "D",
    group: PROCESS,
    help: "how often maintenance windows are re-read (default 30s)\n[FLOTILLA_WINDOWS_RELOAD_INTERVAL]",
    parse: text,
  }),
  logLevel: option({
    flag: "--log-level",
    env: "FLOTILLA_LOG_LEVEL",
    arg: "LEVEL",
    group: PROCESS,
    help: "fatal, error, warn, info, debug, trace or silent [FLOTILLA_LOG_LEVEL]\n(default info)",
    parse: text,
  }),
  help: option({
    flag: "--help",
    short: "-h",
    group: PROCESS,
    help: "this text",
    parse: text,
  }),
  version: option({
    flag: "--version",
    short: "-V",
    group: PROCESS,
    help: "the agent's version",
    parse: text,
  }),
};

/** Names of the agent's settings (help and version are not settings). */
export type AgentOptionKey = Exclude<
  keyof typeof AGENT_OPTIONS,
  "help" | "version"
>;
