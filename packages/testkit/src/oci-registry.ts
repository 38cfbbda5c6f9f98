/**
 * A read-only OCI distribution registry on loopback serving Helm charts, for tests of
 * `helm pull oci://127.0.0.1:PORT/charts/NAME` (with `--plain-http`). Every chart directory under
 * `dir` is packaged with the real `helm package`; each archive is stored the way `helm push`
 * stores it: a config blob (the chart's metadata as JSON, `application/vnd.cncf.helm.config.v1+json`),
 * one layer (the archive, `application/vnd.cncf.helm.chart.content.v1.tar+gzip`) and an OCI image
 * manifest tagged with the chart's version. Only what a pull asks is served: the API check, the
 * tag list, manifests by tag or digest, and blobs; optionally behind basic auth.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { basicAuthorized, serveLoopback } from "./loopback-http.js";
import { findTool, helmEnv } from "./tools.js";

/** The media types helm's push writes (helm's registry package). */
export const HELM_OCI_MEDIA_TYPES = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.cncf.helm.config.v1+json",
  chart: "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
} as const;

/** Options of {@link startOciRegistry}. */
export interface OciRegistryOptions {
  /** The repository path charts go under; default `charts` (`oci://HOST/charts/NAME`). */
  readonly namespace?: string;
  /** Basic auth every request must carry; absent: an open registry. */
  readonly auth?: { readonly username: string; readonly password: string };
}

/** A running registry. */
export interface OciRegistry {
  /** `127.0.0.1:PORT`. */
  readonly host: string;
  /** `oci://127.0.0.1:PORT/NAMESPACE`: append `/CHART` for a chart's reference. */
  readonly url: string;
  /** Requests refused for lacking credentials, so far. */
  refused(): number;
  stop(): Promise<void>;
}

interface Blob {
  readonly mediaType: string;
  readonly bytes: Buffer;
}

const run = promisify(execFile);

function digestOf(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** name and version out of a Chart.yaml (top-level `name:` and `version:` lines). */
function chartMetadata(chartYaml: string): { name: string; version: string } {
  const field = (key: string): string => {
    const value = new RegExp(`^${key}:\\s*"?([^"\\n]+?)"?\\s*$`, "m").exec(
      chartYaml,
    )?.[1];
    if (value === undefined) throw new Error(`Chart.yaml has no ${key}`);
    return value;
  };
  return { name: field("name"), version: field("version") };
}

/** What one repository holds: blobs by digest, manifests by digest and tags. */
interface Repository {
  readonly tags: Map<string, string>;
}

function descriptor(blob: Blob) {
  return {
    mediaType: blob.mediaType,
    digest: digestOf(blob.bytes),
    size: blob.bytes.length,
  };
}

/** Packages the chart directories under `dir` and serves them; stop() removes what it wrote. */
export async function startOciRegistry(
  dir: string,
  options: OciRegistryOptions = {},
): Promise<OciRegistry> {
  const helm = await findTool("helm");
  const namespace = options.namespace ?? "charts";
  const work = await mkdtemp(join(tmpdir(), "flotilla-oci-"));
  const env = helmEnv(join(work, ".helm"));
  const blobs = new Map<string, Blob>();
  const repositories = new Map<string, Repository>();
  const store = (blob: Blob): string => {
    const digest = digestOf(blob.bytes);
    blobs.set(digest, blob);
    return digest;
  };
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const chartDir = join(dir, entry.name);
    const metadata = chartMetadata(
      await readFile(join(chartDir, "Chart.yaml"), "utf8"),
    );
    await run(helm, ["package", chartDir, "--destination", work], { env });
    const archive = await readFile(
      join(work, `${metadata.name}-${metadata.version}.tgz`),
    );
    const config: Blob = {
      mediaType: HELM_OCI_MEDIA_TYPES.config,
      bytes: Buffer.from(JSON.stringify({ apiVersion: "v2", ...metadata })),
    };
    const layer: Blob = {
      mediaType: HELM_OCI_MEDIA_TYPES.chart,
      bytes: archive,
    };
    store(config);
    store(layer);
    const manifest: Blob = {
      mediaType: HELM_OCI_MEDIA_TYPES.manifest,
      bytes: Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: HELM_OCI_MEDIA_TYPES.manifest,
          config: descriptor(config),
          layers: [descriptor(layer)],
          annotations: {
            "org.opencontainers.image.title": metadata.name,
            "org.opencontainers.image.version": metadata.version,
          },
        }),
      ),
    };
    const name = `${namespace}/${metadata.name}`;
    const repository = repositories.get(name) ?? { tags: new Map() };
    // OCI tags cannot hold "+": helm pushes 1.0.0+build as 1.0.0_build.
    repository.tags.set(metadata.version.replace(/\+/g, "_"), store(manifest));
    repositories.set(name, repository);
  }

  let refusals = 0;
  const send = (
    response: ServerResponse,
    request: IncomingMessage,
    blob: Blob,
  ): void => {
    response.writeHead(200, {
      "content-type": blob.mediaType,
      "content-length": String(blob.bytes.length),
      "docker-content-digest": digestOf(blob.bytes),
    });
    response.end(request.method === "HEAD" ? undefined : blob.bytes);
  };
  const notFound = (response: ServerResponse, code: string): void => {
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ errors: [{ code, message: code }] }));
  };
  const server = await serveLoopback((request, response) => {
    if (!basicAuthorized(request.headers.authorization, options.auth)) {
      refusals += 1;
      response.writeHead(401, {
        "www-authenticate": 'Basic realm="flotilla-test-registry"',
        "content-type": "application/json",
      });
      response.end(JSON.stringify({ errors: [{ code: "UNAUTHORIZED" }] }));
      return;
    }
    const path = new URL(request.url ?? "/", "http://registry").pathname;
    if (path === "/v2/" || path === "/v2") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
      return;
    }
    const match =
      /^\/v2\/(.+)\/(tags\/list|manifests\/([^/]+)|blobs\/([^/]+))$/.exec(path);
    const repository =
      match?.[1] === undefined ? undefined : repositories.get(match[1]);
    if (match === null || repository === undefined) {
      notFound(response, "NAME_UNKNOWN");
      return;
    }
    if (match[2] === "tags/list") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({ name: match[1], tags: [...repository.tags.keys()] }),
      );
      return;
    }
    const reference = match[3] ?? match[4] ?? "";
    const digest = repository.tags.get(reference) ?? reference;
    const blob = blobs.get(digest);
    if (blob === undefined) {
      notFound(
        response,
        match[3] === undefined ? "BLOB_UNKNOWN" : "MANIFEST_UNKNOWN",
      );
      return;
    }
    send(response, request, blob);
  });
  const host = `127.0.0.1:${String(server.port)}`;
  return {
    host,
    url: `oci://${host}/${namespace}`,
    refused: () => refusals,
    stop: async () => {
      await server.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}
