/** The `flotilla-agent --help` text. */
export const USAGE = `Usage: flotilla-agent [flags]
       flotilla-agent windows show|set|freeze|clear [flags]

Follows each cluster's intent from NATS, makes it so, and reports status to the flotilla hub.
Every flag has an environment fallback (in brackets); a flag wins over its variable.

Hub:
  --hub HOST:PORT            the hub's gRPC address [FLOTILLA_HUB] (default 127.0.0.1:7070)
  --tls-ca FILE              verify the hub with this CA certificate (PEM) [FLOTILLA_TLS_CA]
  --tls-cert FILE            client certificate for mutual TLS [FLOTILLA_TLS_CERT]
  --tls-key FILE             its private key [FLOTILLA_TLS_KEY]
  --insecure-plaintext       connect without TLS, development only [FLOTILLA_INSECURE_PLAINTEXT=1]

Joining the fleet (TLS without --tls-cert; see docs/agent.md "Joining the fleet"):
  --identity-dir DIR         keep each cluster's identity (key, certificate, NATS credentials) in
                             DIR/CLUSTER [FLOTILLA_IDENTITY_DIR] (default STATE_DIR/identities)
  --bootstrap-token-file FILE  register a cluster that has no valid identity yet with the token in
                             FILE (from \`flotilla token create\`) [FLOTILLA_BOOTSTRAP_TOKEN_FILE];
                             or the token itself in FLOTILLA_BOOTSTRAP_TOKEN (there is no flag for
                             it: flags show in ps). Used once, never stored.

Intents:
  --nats URL[,URL...]        NATS servers [FLOTILLA_NATS] (default nats://127.0.0.1:4222)
  --intents-prefix PREFIX    bucket and subject prefix, as the hub's [FLOTILLA_INTENTS_PREFIX]
                             (default flotilla)

Clusters (exactly one of --kubernetes, --simulated, --simulated-fleet):
  --kubernetes in-cluster|FILE  a real cluster: the pod's service account, or a kubeconfig file
                             [FLOTILLA_KUBERNETES]
  --cluster-name NAME        the cluster's name in the fleet (required with --kubernetes; with
                             --simulated, over the file's) [FLOTILLA_CLUSTER_NAME]
  --simulated FILE           one simulated cluster (YAML or JSON) [FLOTILLA_SIMULATED]
  --simulated-fleet FILE     many simulated clusters, one agent each [FLOTILLA_SIMULATED_FLEET]

Kubernetes backend (with --kubernetes; see docs/agent.md "Running in a cluster"):
  --namespace NS             the agent's namespace: bundle inventories, windows ConfigMap
                             [FLOTILLA_NAMESPACE] (default: the kubeconfig context's, or the
                             service account's)
  --windows-configmap NAME   the owner's maintenance windows ConfigMap [FLOTILLA_WINDOWS_CONFIGMAP]
                             (default flotilla-agent-windows)
  --apply-force-conflicts    take over fields other managers own instead of failing
                             [FLOTILLA_APPLY_FORCE_CONFLICTS=1]
  --label KEY=VALUE          a label reported to the hub; repeatable [FLOTILLA_LABELS="k=v,k=v"]
  --region REGION            the region reported to the hub [FLOTILLA_REGION]
  --identity-secret NAME     the Secret in NS that keeps the cluster's identity, unless --identity-dir
                             is given [FLOTILLA_IDENTITY_SECRET] (default flotilla-agent-identity)
  --upgrade-driver DRIVER    none, system-upgrade-controller (k3s, RKE2) or cluster-api
                             [FLOTILLA_UPGRADE_DRIVER] (default none: no upgrades)
  --suc-distribution k3s|rke2  required with system-upgrade-controller [FLOTILLA_SUC_DISTRIBUTION]
  --suc-namespace NS         the Plans' namespace [FLOTILLA_SUC_NAMESPACE] (default system-upgrade)
  --suc-server-plan NAME     [FLOTILLA_SUC_SERVER_PLAN] (default server-plan)
  --suc-agent-plan NAME      [FLOTILLA_SUC_AGENT_PLAN] (default agent-plan)
  --capi-cluster NAME        the Cluster to upgrade, required with cluster-api [FLOTILLA_CAPI_CLUSTER]
  --capi-namespace NS        its namespace [FLOTILLA_CAPI_NAMESPACE] (default default)

Process:
  --state-dir DIR            keep progress in DIR/progress.json across restarts [FLOTILLA_STATE_DIR]
                             (default: in memory only)
  --metrics-listen HOST:PORT serve /metrics and /healthz, or "off" [FLOTILLA_METRICS_LISTEN]
                             (default 127.0.0.1:9464)
  --windows-reload-interval D how often maintenance windows are re-read (default 30s)
                             [FLOTILLA_WINDOWS_RELOAD_INTERVAL]
  --log-level LEVEL          fatal, error, warn, info, debug, trace or silent [FLOTILLA_LOG_LEVEL]
                             (default info)
  -h, --help                 this text
  -V, --version              the agent's version

Commands:
  flotilla-agent windows show|set|freeze|clear ...  the owner's maintenance windows in the
                             cluster's ConfigMap (also a kubectl plugin); windows --help for more

Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failed, 2 bad configuration.
See docs/agent.md.
`;
