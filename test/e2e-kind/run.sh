#!/usr/bin/env bash
# End-to-end test of the Helm charts in a kind cluster. NOT RUN IN CI: it needs Docker, kind,
# kubectl and helm, which the development and CI machines do not have; it exits 77 (skipped)
# when one is missing. Run it from anywhere on a Linux machine that has them:
#
#   bash test/e2e-kind/run.sh
#
# It builds the image (deploy/docker/Dockerfile), creates a kind cluster, installs NATS in
# operator mode (deploy/nats/nats.yaml with the files of `flotilla-hub nats-setup`), the hub chart
# with an admin token, creates a bootstrap token bound to the cluster's name, installs the agent
# chart with it, waits for the agent to connect, applies examples/live-demo/bundle and waits until
# the hub reports it Ready on the cluster. The CLI runs from the image on the host network,
# through a port-forward to the hub's Service.
#
# Environment:
#   FLOTILLA_E2E_BACKEND   simulated (default) or kubernetes. The agent's Kubernetes backend is
#                          not wired into its configuration yet; with kubernetes the script also
#                          checks the bundle's Deployment in the cluster.
#   FLOTILLA_E2E_CLUSTER   kind cluster name (default flotilla-e2e)
#   FLOTILLA_E2E_KEEP=1    keep the cluster afterwards (for debugging)
#   FLOTILLA_E2E_TIMEOUT   seconds to wait for each step (default 180)
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
backend="${FLOTILLA_E2E_BACKEND:-simulated}"
kind_cluster="${FLOTILLA_E2E_CLUSTER:-flotilla-e2e}"
timeout_s="${FLOTILLA_E2E_TIMEOUT:-180}"
image="flotilla:e2e"
ns="flotilla-system"
cluster_name="e2e-1"
port=17070

for tool in docker kind kubectl helm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "e2e-kind: skipped: $tool is not installed (needs docker, kind, kubectl and helm)" >&2
    exit 77
  fi
done
if ! docker info >/dev/null 2>&1; then
  echo "e2e-kind: skipped: the Docker daemon is not reachable" >&2
  exit 77
fi
case "$backend" in
  simulated | kubernetes) ;;
  *)
    echo "e2e-kind: FLOTILLA_E2E_BACKEND must be simulated or kubernetes, not \"$backend\"" >&2
    exit 2
    ;;
esac

work="$(mktemp -d)"
forward_pid=""
cleanup() {
  status=$?
  if [ -n "$forward_pid" ]; then kill "$forward_pid" 2>/dev/null || true; fi
  if [ "$status" -ne 0 ]; then
    echo "e2e-kind: FAILED; hub and agent logs follow" >&2
    kubectl -n "$ns" logs deploy/flotilla-hub --tail=50 >&2 || true
    kubectl -n "$ns" logs deploy/flotilla-agent --tail=50 >&2 || true
  fi
  if [ "${FLOTILLA_E2E_KEEP:-0}" != 1 ]; then kind delete cluster --name "$kind_cluster" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

step() { echo "e2e-kind: $*" >&2; }

# Polls "$@" until it succeeds or the step's time is up.
wait_for() {
  local what="$1"
  shift
  local deadline=$((SECONDS + timeout_s))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "e2e-kind: timed out after ${timeout_s}s waiting for $what" >&2
      return 1
    fi
    sleep 2
  done
}

# The CLI from the image, on the host network (the port-forward listens on 127.0.0.1).
flotilla() {
  docker run --rm -i --network host --user "$(id -u):$(id -g)" \
    -v "$work:$work:ro" -v "$repo/examples:/examples:ro" \
    -e FLOTILLA_HUB="127.0.0.1:$port" -e FLOTILLA_TLS_CA="$work/hub-ca.pem" \
    -e FLOTILLA_TOKEN_FILE="$work/admin.token" \
    "$image" node /app/packages/cli/dist/main.js "$@"
}

step "building $image"
docker build -f "$repo/deploy/docker/Dockerfile" -t "$image" "$repo"

step "creating kind cluster $kind_cluster"
kind create cluster --name "$kind_cluster" --wait 120s
kind load docker-image "$image" --name "$kind_cluster"
kubectl create namespace "$ns"

step "NATS in operator mode"
mkdir -p "$work/nats"
docker run --rm --user "$(id -u):$(id -g)" -v "$work/nats:/out" "$image" \
  node /app/packages/hub/dist/main.js nats-setup --out /out --resolver-dir /data/jwt
kubectl -n "$ns" create secret generic nats-auth --from-file="$work/nats/nats-auth.conf"
kubectl -n "$ns" create secret generic flotilla-hub-nats \
  --from-file="$work/nats/hub.creds" --from-file="$work/nats/hub-system.creds" \
  --from-file="$work/nats/agents-account.jwt" --from-file="$work/nats/agents-signing.nk" \
  --from-file="$work/nats/operator-signing.nk"
kubectl -n "$ns" apply -f "$repo/deploy/nats/nats.yaml"
kubectl -n "$ns" rollout status deploy/nats --timeout="${timeout_s}s"

step "installing the hub chart"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/admin.token"
digest="$(sha256sum <"$work/admin.token" | cut -d' ' -f1)"
cat >"$work/hub-values.yaml" <<YAML
image: { repository: flotilla, tag: e2e, pullPolicy: Never }
nats:
  url: nats://nats.$ns.svc:4222
  credentials: { existingSecret: flotilla-hub-nats }
adminTokens:
  tokens: [{ name: e2e, role: admin, tokenSha256: "$digest" }]
YAML
helm install flotilla-hub "$repo/deploy/helm/flotilla-hub" -n "$ns" \
  -f "$work/hub-values.yaml" --wait --timeout "${timeout_s}s"
wait_for "the hub's CA file" kubectl -n "$ns" exec deploy/flotilla-hub -- test -s /var/run/flotilla/ca.pem
kubectl -n "$ns" exec deploy/flotilla-hub -- cat /var/run/flotilla/ca.pem >"$work/hub-ca.pem"
kubectl -n "$ns" port-forward svc/flotilla-hub "$port:7070" >/dev/null 2>&1 &
forward_pid=$!
wait_for "the hub to answer the CLI" flotilla cluster list

step "creating a bootstrap token for $cluster_name"
flotilla token create --ttl 1h --max-uses 1 --cluster "$cluster_name" --reason e2e-kind -o json \
  >"$work/token.json"
docker run --rm -i "$image" node -e \
  'let s="";process.stdin.on("data",(d)=>{s+=d;}).on("end",()=>{process.stdout.write(JSON.parse(s).secret);});' \
  <"$work/token.json" >"$work/bootstrap.token"
test -s "$work/bootstrap.token"
kubectl -n "$ns" create secret generic flotilla-agent-token --from-file=token="$work/bootstrap.token"
kubectl -n "$ns" create configmap flotilla-hub-ca --from-file=ca.pem="$work/hub-ca.pem"

step "installing the agent chart (backend $backend)"
cat >"$work/agent-values.yaml" <<YAML
clusterName: $cluster_name
image: { repository: flotilla, tag: e2e, pullPolicy: Never }
hub:
  address: flotilla-hub.$ns.svc:7070
  tls: { mode: tls, ca: { existingConfigMap: flotilla-hub-ca, key: ca.pem } }
nats: { url: nats://nats.$ns.svc:4222 }
bootstrapToken: { existingSecret: flotilla-agent-token }
backend:
  type: $backend
  simulated:
    cluster:
      kubernetesVersion: "1.30.5"
      timeToReady: { fixedSeconds: 2 }
YAML
helm install flotilla-agent "$repo/deploy/helm/flotilla-agent" -n "$ns" \
  -f "$work/agent-values.yaml" --wait --timeout "${timeout_s}s"

connected() { flotilla cluster get "$cluster_name" -o json | grep -q '"CONNECTION_STATE_CONNECTED"'; }
wait_for "agent $cluster_name to connect" connected
flotilla cluster label "$cluster_name" env=canary --reason e2e-kind

step "applying examples/live-demo/bundle"
flotilla bundle apply /examples/live-demo/bundle --reason e2e-kind
ready() {
  flotilla bundle get web-frontend -o json | grep -Eq '"state": *"BUNDLE_CLUSTER_STATE_READY"'
}
wait_for "bundle web-frontend to be Ready on $cluster_name" ready
if [ "$backend" = kubernetes ]; then
  kubectl -n web-canary rollout status deployment/web-frontend --timeout="${timeout_s}s"
fi

step "passed: the agent registered, connected and reported the bundle Ready"
