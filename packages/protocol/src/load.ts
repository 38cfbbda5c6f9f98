/**
 * Loading `proto/flotilla/v1` with @grpc/proto-loader. The options here and the flags of
 * scripts/gen-proto.sh must agree, or the generated types lie about the decoded objects:
 * - `keepCase: false`: fields are camelCase in TypeScript (`cluster_name` → `clusterName`), like
 *   the domain types, while the .proto files keep protobuf's snake_case.
 * - `longs: Number`: 64-bit integers are plain numbers (exact below 2^53; decoders reject larger).
 *   `String` would push string arithmetic into every caller; `Long` objects do not serialize.
 * - `enums: String`: enum values are their names (`"RUN_STATE_RUNNING"`); the codecs map them to
 *   the domain's names. An unknown enum number from a newer peer arrives as a number and is
 *   rejected by the decoders.
 * - `defaults: true`: absent scalars read as 0 / "" / false, lists as [], maps as {}, messages as
 *   null; fields declared `optional` (and oneof members) stay undefined when absent.
 * - `oneofs: true`: each oneof also appears as a field naming its set member
 *   (`message.body === "hello"`).
 */
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType as AdminProto } from "./generated/admin.js";
import type { ProtoGrpcType as AgentProto } from "./generated/agent.js";
import type { AdminServiceDefinition } from "./generated/flotilla/v1/AdminService.js";
import type { AgentServiceDefinition } from "./generated/flotilla/v1/AgentService.js";

/**
 * The `proto/` directory of the repository. `src/` and `dist/` sit at the same depth, so this holds
 * for the sources (tests) and the build alike.
 */
export const PROTO_ROOT: string = fileURLToPath(
  new URL("../../../proto", import.meta.url),
);

/** The entry files, relative to {@link PROTO_ROOT}; their imports are followed. */
export const PROTO_FILES: readonly string[] = [
  "flotilla/v1/agent.proto",
  "flotilla/v1/admin.proto",
];

/** The proto-loader options every flotilla process uses (see the module comment). */
export const PROTO_LOADER_OPTIONS = {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const satisfies protoLoader.Options;

/** The loaded package, typed by the generated types. */
export type FlotillaProto = AgentProto & AdminProto;

/** Everything a server or client needs from the protos. */
export interface FlotillaProtocol {
  readonly packageDefinition: protoLoader.PackageDefinition;
  readonly proto: FlotillaProto;
  /** For `server.addService(agentService, handlers)`. */
  readonly agentService: AgentServiceDefinition;
  readonly adminService: AdminServiceDefinition;
  /** Client constructors: `new AgentServiceClient(address, credentials, options)`. */
  readonly AgentServiceClient: FlotillaProto["flotilla"]["v1"]["AgentService"];
  readonly AdminServiceClient: FlotillaProto["flotilla"]["v1"]["AdminService"];
}

let loaded: FlotillaProtocol | undefined;

/**
 * Loads the protos (once per process; later calls return the same objects). `protoRoot` overrides
 * where the .proto files are read from, for a deployment that ships them elsewhere.
 */
export function loadProtocol(
  options: { readonly protoRoot?: string } = {},
): FlotillaProtocol {
  if (loaded !== undefined && options.protoRoot === undefined) return loaded;
  const packageDefinition = protoLoader.loadSync([...PROTO_FILES], {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [options.protoRoot ?? PROTO_ROOT],
  });
  // loadPackageDefinition builds the constructors the generated ProtoGrpcType describes.
  const proto = grpc.loadPackageDefinition(
    packageDefinition,
  ) as unknown as FlotillaProto;
  const v1 = proto.flotilla.v1;
  const protocol: FlotillaProtocol = {
    packageDefinition,
    proto,
    agentService: v1.AgentService.service,
    adminService: v1.AdminService.service,
    AgentServiceClient: v1.AgentService,
    AdminServiceClient: v1.AdminService,
  };
  if (options.protoRoot === undefined) loaded = protocol;
  return protocol;
}
