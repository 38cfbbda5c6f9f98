/**
 * The wire's numbers: the protocol revision, message sizes, and the bounds every decoder enforces
 * on untrusted input so that one agent or caller cannot make the hub hold or store unbounded data.
 */

/** The protocol revision an agent announces in Hello and the hub answers in Welcome. */
export const PROTOCOL_VERSION = 1;

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Largest request a server accepts (grpc-js's default receive limit): an ApplyBundle with inline
 * manifests is the largest; anything bigger goes through PutObject.
 */
export const MAX_REQUEST_BYTES = 4 * MiB;

/** Largest response the hub sends: a run status with one entry per member (10,000 members fit). */
export const MAX_RESPONSE_BYTES = 16 * MiB;

/** Largest message an agent sends on its stream; facts and reports are small by construction. */
export const MAX_AGENT_MESSAGE_BYTES = 256 * KiB;

/** Inline manifests of one ApplyBundle, in total; larger bundles upload files with PutObject. */
export const MAX_INLINE_MANIFEST_BYTES = 3 * MiB;

/**
 * Renderer input files of one bundle (BundleSpec.files: a chart's or a Kustomize directory's
 * files). Their total size is bounded by the bundle content limit (MAX_BUNDLE_CONTENT_BYTES).
 */
export const MAX_BUNDLE_FILES = 1000;

/** Size of one PutObject chunk. */
export const OBJECT_CHUNK_BYTES = 1 * MiB;

/** Per-resource reasons in one status report; the rest are counted in `reasonsTruncated`. */
export const MAX_REASONS = 20;

/** Labels on one cluster: core's bound on every label map, so the agent and the API agree. */
export { MAX_LABELS } from "@flotilla/core";

/** Node pools of one cluster. */
export const MAX_NODE_POOLS = 100;

/** Maintenance windows per scope. */
export const MAX_WINDOWS_PER_SCOPE = 16;

/** Freezes of one cluster. */
export const MAX_FREEZES = 64;

/** Not-allowed date ranges of one recurring window. */
export const MAX_NOT_ALLOWED_DATES = 64;

/** Names (clusters, stages, groups, bundles, runs) are DNS labels. */
export const MAX_NAME_LENGTH = 63;

/** Kubernetes object names (DNS subdomains) in per-resource reasons. */
export const MAX_RESOURCE_NAME_LENGTH = 253;

/** Identifiers such as revisions, upgrade ids, versions, image families, regions, states. */
export const MAX_ID_LENGTH = 128;

/** Human-readable messages (per-resource reasons, summaries). */
export const MAX_MESSAGE_LENGTH = 1024;

/** An error text in a status report. */
export const MAX_ERROR_LENGTH = 4096;

/** Field problems carried with an error (they travel in a trailer). */
export const MAX_WIRE_PROBLEMS = 20;

/** The encoded size of those problems. */
export const MAX_PROBLEMS_BYTES = 8 * KiB;

/** A problem's value as JSON; longer values are sent as their shortened display form. */
export const MAX_PROBLEM_VALUE_LENGTH = 200;

/** The status message of an error (the `grpc-message` header). */
export const MAX_ERROR_DETAILS_LENGTH = 2048;

/** 64-bit fields are read as JavaScript numbers (`longs: Number`): exact only up to 2^53 - 1. */
export const MAX_WIRE_INTEGER = Number.MAX_SAFE_INTEGER;

/** grpc-js channel options for an admin client: responses may be large (run status). */
export const ADMIN_CLIENT_OPTIONS = {
  "grpc.max_receive_message_length": MAX_RESPONSE_BYTES,
  "grpc.max_send_message_length": MAX_REQUEST_BYTES,
} as const;

/** grpc-js channel options for an agent client: it never sends more than an agent message. */
export const AGENT_CLIENT_OPTIONS = {
  "grpc.max_receive_message_length": MAX_REQUEST_BYTES,
  "grpc.max_send_message_length": MAX_AGENT_MESSAGE_BYTES,
} as const;

/** grpc-js server options for the hub. */
export const SERVER_OPTIONS = {
  "grpc.max_receive_message_length": MAX_REQUEST_BYTES,
  "grpc.max_send_message_length": MAX_RESPONSE_BYTES,
} as const;

/** Kubernetes versions in one cluster's catalogue (docs/engine.md#the-version-catalogue). */
export const MAX_CATALOGUE_KUBERNETES_VERSIONS = 200;

/** Node-image versions one node pool's catalogue lists. */
export const MAX_CATALOGUE_IMAGE_VERSIONS = 200;

/** A version string in a catalogue or a release. */
export const MAX_VERSION_LENGTH = 100;
