/**
 * A Helm chart repository on loopback for tests: every chart directory under `dir` is packaged
 * with the real `helm package`, indexed with `helm repo index`, and served over HTTP (optionally
 * behind basic auth), as a repository such as charts.example.com would serve them. It starts
 * helm, so tests that use it belong to the e2e loop.
 */
import { execFile } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { basicAuthorized, serveLoopback } from "./loopback-http.js";
import { findTool, helmEnv } from "./tools.js";

/** Options of {@link startChartRepository}. */
export interface ChartRepositoryOptions {
  /** Basic auth every request must carry; absent: an open repository. */
  readonly auth?: { readonly username: string; readonly password: string };
}

/** A running repository. */
export interface ChartRepository {
  /** `http://127.0.0.1:PORT` (no trailing slash), the `helm.repo` of fleet.yaml. */
  readonly url: string;
  /** The archives it serves, by file name (`demo-1.2.0.tgz`). */
  readonly archives: readonly string[];
  /** Requests refused for lacking credentials, so far. */
  refused(): number;
  stop(): Promise<void>;
}

const run = promisify(execFile);

/** Packages the chart directories under `dir` and serves them; stop() removes what it wrote. */
export async function startChartRepository(
  dir: string,
  options: ChartRepositoryOptions = {},
): Promise<ChartRepository> {
  const helm = await findTool("helm");
  const served = await mkdtemp(join(tmpdir(), "flotilla-chart-repo-"));
  const env = helmEnv(join(served, ".helm"));
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory())
      await run(
        helm,
        ["package", join(dir, entry.name), "--destination", served],
        { env },
      );
  }
  let refusals = 0;
  const server = await serveLoopback((request, response) => {
    if (!basicAuthorized(request.headers.authorization, options.auth)) {
      refusals += 1;
      response.writeHead(401, { "www-authenticate": 'Basic realm="charts"' });
      response.end("unauthorized\n");
      return;
    }
    const name = decodeURIComponent(
      new URL(request.url ?? "/", "http://x").pathname,
    ).replace(/^\/+/, "");
    if (name.includes("/") || name.startsWith(".") || name === "") {
      response.writeHead(404).end("not found\n");
      return;
    }
    const file = join(served, name);
    stat(file).then(
      (info) => {
        response.writeHead(200, { "content-length": String(info.size) });
        createReadStream(file).pipe(response);
      },
      () => {
        response.writeHead(404).end("not found\n");
      },
    );
  });
  const url = `http://127.0.0.1:${String(server.port)}`;
  await run(helm, ["repo", "index", served, "--url", url], { env });
  const archives = (await readdir(served)).filter((f) => f.endsWith(".tgz"));
  return {
    url,
    archives,
    refused: () => refusals,
    stop: async () => {
      await server.close();
      await rm(served, { recursive: true, force: true });
    },
  };
}
