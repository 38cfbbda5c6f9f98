/**
 * @flotilla/agent: runs in each downstream cluster, follows the cluster's intent from NATS, makes it
 * so through its ports (`KubeGateway`, `UpgradeDriver`) and reports status to the hub over gRPC.
 */
export {};
