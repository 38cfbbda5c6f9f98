/** The `flotilla-agent --help` text. */
export const USAGE = `Usage: flotilla-agent [flags]

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

Clusters (the Kubernetes backend is not available yet):
  --simulated FILE           one simulated cluster (YAML or JSON) [FLOTILLA_SIMULATED]
  --cluster-name NAME        its name, over the file's [FLOTILLA_CLUSTER_NAME]
  --simulated-fleet FILE     many simulated clusters, one agent each [FLOTILLA_SIMULATED_FLEET]

Process:
  --state-dir DIR            keep progress in DIR/progress.json across restarts [FLOTILLA_STATE_DIR]
                             (default: in memory only)
  --metrics-listen HOST:PORT serve /metrics and /healthz, or "off" [FLOTILLA_METRICS_LISTEN]
  --windows-reload-interval D how often maintenance files are re-read (default 30s) [FLOTILLA_WINDOWS_RELOAD_INTERVAL]
                             (default 127.0.0.1:9464)
  --log-level LEVEL          fatal, error, warn, info, debug, trace or silent [FLOTILLA_LOG_LEVEL]
                             (default info)
  -h, --help                 this text
  -V, --version              the agent's version

Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failed, 2 bad configuration.
See docs/agent.md.
`;
