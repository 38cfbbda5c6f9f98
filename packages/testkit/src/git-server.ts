/**
 * Local git servers for the hub's GitRepo tests: bare repositories in a temporary directory, served
 * by `git daemon` (git://), by `git http-backend` behind a small Node HTTP server (smart HTTP, with
 * an optional basic-auth token check answering 401 otherwise), and as file:// URLs. Each repository
 * has a helper that commits files (written or deleted) to a branch, rewrites a branch's history
 * (force push) and deletes a branch, as a person pushing to a real server would.
 */
import { spawn, execFile } from "node:child_process";
import { constants } from "node:fs";
import {
  access,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.js";
import { basicAuthorized, serveLoopback } from "./loopback-http.js";
import { startProcess, type TestProcess } from "./process.js";
import { waitFor } from "./wait-for.js";
import { connect } from "node:net";

const exec = promisify(execFile);

/** The environment of the helpers' own git commands (no user configuration, a fixed author). */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "testkit",
  GIT_AUTHOR_EMAIL: "testkit@example.com",
  GIT_COMMITTER_NAME: "testkit",
  GIT_COMMITTER_EMAIL: "testkit@example.com",
};

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec("git", args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.trim();
}

export interface GitServerOptions {
  /** When set, the HTTP server answers 401 to any request without this basic auth. */
  readonly httpAuth?: { readonly username: string; readonly password: string };
  /**
   * Also serve ssh:// with the machine's sshd (`openssh-server`) when it is installed, accepting
   * one generated client key; {@link GitServer.ssh} is undefined when there is no sshd.
   */
  readonly ssh?: boolean;
}

/** The SSH side of a {@link GitServer}: the accepted client key and the server's host key. */
export interface GitSshAccess {
  /** The client's private key (OpenSSH PEM) that the server accepts. */
  readonly privateKey: string;
  /** A known_hosts line for the server. */
  readonly knownHosts: string;
  /** Another key, that the server does not accept. */
  readonly otherPrivateKey: string;
}

/** What a commit changes: a path's new content, a symbolic link to make, or null to delete it. */
export type GitFiles = Readonly<
  Record<string, string | { readonly symlink: string } | null>
>;

/** One bare repository of a {@link GitServer}. */
export interface TestGitRepo {
  readonly name: string;
  /** git://127.0.0.1:PORT/NAME.git */
  readonly gitUrl: string;
  /** http://127.0.0.1:PORT/NAME.git */
  readonly httpUrl: string;
  /** file:///…/NAME.git */
  readonly fileUrl: string;
  /** ssh://USER@127.0.0.1:PORT/…/NAME.git, when the server serves SSH. */
  readonly sshUrl?: string;
  /**
   * Commits `files` (written or deleted) on top of `branch` (created when absent, from nothing)
   * and pushes; resolves with the new commit.
   */
  commit(branch: string, files: GitFiles, message?: string): Promise<string>;
  /**
   * Replaces `branch`'s history with one new commit of exactly `files` (no parent) and pushes it
   * with --force; resolves with the new commit.
   */
  forcePush(branch: string, files: GitFiles): Promise<string>;
  /** Deletes `branch` on the server. */
  deleteBranch(branch: string): Promise<void>;
  /** Tags `commit` on the server with an annotated tag `name`. */
  tag(name: string, commit: string): Promise<void>;
  /** The commit `branch` points at on the server. */
  head(branch: string): Promise<string>;
}

export interface GitServer extends AsyncDisposable {
  /** The directory holding the bare repositories. */
  readonly root: string;
  /** Creates an empty bare repository `NAME.git` whose HEAD is `defaultBranch` (default main). */
  createRepo(name: string, defaultBranch?: string): Promise<TestGitRepo>;
  /** SSH access, when asked for and sshd is installed. */
  readonly ssh?: GitSshAccess;
  /** HTTP requests the server answered, with their status (401s included). */
  readonly httpRequests: readonly {
    readonly path: string;
    readonly status: number;
  }[];
  close(): Promise<void>;
}

/** Serves one git http-backend CGI request. */
function httpBackend(
  root: string,
  auth: GitServerOptions["httpAuth"],
  seen: { path: string; status: number }[],
): Parameters<typeof serveLoopback>[0] {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (!basicAuthorized(req.headers.authorization, auth)) {
      seen.push({ path: url.pathname, status: 401 });
      res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' });
      res.end("unauthorized\n");
      return;
    }
    const child = spawn("git", ["http-backend"], {
      env: {
        ...process.env,
        ...GIT_ENV,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head
        .subarray(0, end)
        .toString("latin1")
        .split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon < 0) continue;
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key.toLowerCase() === "status")
          status = Number(value.split(" ")[0]);
        else headers[key] = value;
      }
      seen.push({ path: url.pathname, status });
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    child.stdout.on("end", () => {
      if (!headersDone) res.writeHead(502);
      res.end();
    });
  };
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      resolve(false);
    });
  });
}

const SSHD = "/usr/sbin/sshd";

/** Starts sshd on a free port accepting one generated key, or undefined without sshd. */
async function startSshd(
  root: string,
  work: string,
): Promise<
  { process: TestProcess; port: number; access: GitSshAccess } | undefined
> {
  try {
    await access(SSHD, constants.X_OK);
  } catch {
    return undefined;
  }
  const dir = join(root, "ssh");
  await mkdir(dir, { mode: 0o700 });
  const keygen = (file: string) =>
    exec("ssh-keygen", [
      "-q",
      "-t",
      "ed25519",
      "-N",
      "",
      "-f",
      join(dir, file),
    ]);
  await keygen("host");
  await keygen("client");
  await keygen("other");
  const read = (file: string) => readFile(join(dir, file), "utf8");
  await writeFile(join(dir, "authorized"), await read("client.pub"));
  const port = await freePort();
  await writeFile(
    join(dir, "sshd_config"),
    [
      `Port ${String(port)}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host")}`,
      `AuthorizedKeysFile ${join(dir, "authorized")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "",
    ].join("\n"),
  );
  // sshd wants its privilege separation directory (a root-run sshd only).
  await mkdir("/run/sshd", { recursive: true }).catch(() => undefined);
  const sshd = startProcess({
    name: "sshd",
    command: SSHD,
    args: ["-D", "-e", "-f", join(dir, "sshd_config")],
    cwd: work,
  });
  await sshd.waitForLine(/Server listening/, 10_000);
  const hostKey = (await read("host.pub"))
    .trim()
    .split(" ")
    .slice(0, 2)
    .join(" ");
  return {
    process: sshd,
    port,
    access: {
      privateKey: await read("client"),
      otherPrivateKey: await read("other"),
      knownHosts: `[127.0.0.1]:${String(port)} ${hostKey}\n`,
    },
  };
}

/** Starts git daemon and the HTTP server over a fresh directory of bare repositories. */
export async function startGitServer(
  options: GitServerOptions = {},
): Promise<GitServer> {
  const root = await mkdtemp(join(tmpdir(), "flotilla-git-server-"));
  const repos = join(root, "repos");
  const work = join(root, "work");
  await mkdir(repos);
  await mkdir(work);
  const port = await freePort();
  const daemon: TestProcess = startProcess({
    name: "git daemon",
    command: "git",
    args: [
      "daemon",
      "--reuseaddr",
      "--export-all",
      `--base-path=${repos}`,
      "--listen=127.0.0.1",
      `--port=${String(port)}`,
      repos,
    ],
    env: GIT_ENV,
  });
  await waitFor(() => listening(port), { timeoutMs: 10_000 });
  const sshd = options.ssh === true ? await startSshd(root, work) : undefined;
  const seen: { path: string; status: number }[] = [];
  const http = await serveLoopback(httpBackend(repos, options.httpAuth, seen));

  const createRepo = async (
    name: string,
    defaultBranch = "main",
  ): Promise<TestGitRepo> => {
    const bare = join(repos, `${name}.git`);
    await git(
      root,
      "init",
      "-q",
      "--bare",
      `--initial-branch=${defaultBranch}`,
      bare,
    );
    const clone = join(work, name);
    await git(root, "init", "-q", clone);
    const apply = async (files: GitFiles): Promise<void> => {
      for (const [path, content] of Object.entries(files)) {
        const file = join(clone, path);
        if (content === null) await rm(file, { force: true });
        else {
          await mkdir(dirname(file), { recursive: true });
          if (typeof content === "string") await writeFile(file, content);
          else await symlink(content.symlink, file);
        }
      }
    };
    const push = async (
      branch: string,
      force: boolean,
      message = `change ${branch}`,
    ): Promise<string> => {
      await git(clone, "add", "-A");
      await git(clone, "commit", "-q", "--allow-empty", "-m", message);
      await git(
        clone,
        "push",
        "-q",
        ...(force ? ["--force"] : []),
        bare,
        `HEAD:refs/heads/${branch}`,
      );
      return git(clone, "rev-parse", "HEAD");
    };
    const exists = async (branch: string): Promise<boolean> =>
      (await git(bare, "branch", "--list", branch)) !== "";
    const fresh = async (): Promise<void> => {
      await git(
        clone,
        "checkout",
        "-q",
        "--orphan",
        `tmp-${String(Date.now())}`,
      );
      await git(clone, "rm", "-rfq", "--ignore-unmatch", ".");
    };
    return {
      name,
      gitUrl: `git://127.0.0.1:${String(port)}/${name}.git`,
      httpUrl: `http://127.0.0.1:${String(http.port)}/${name}.git`,
      fileUrl: `file://${bare}`,
      ...(sshd === undefined
        ? {}
        : {
            sshUrl: `ssh://${userInfo().username}@127.0.0.1:${String(sshd.port)}${bare}`,
          }),
      commit: async (branch, files, message) => {
        if (await exists(branch)) {
          await git(clone, "fetch", "-q", bare, branch);
          await git(clone, "checkout", "-q", "-f", "--detach", "FETCH_HEAD");
          await git(clone, "clean", "-qfdx");
        } else await fresh();
        await apply(files);
        return push(branch, false, message);
      },
      forcePush: async (branch, files) => {
        await fresh();
        await apply(files);
        return push(branch, true);
      },
      deleteBranch: async (branch) => {
        await git(bare, "branch", "-D", branch);
      },
      tag: async (tagName, commit) => {
        await git(bare, "tag", "-a", "-m", tagName, tagName, commit);
      },
      head: (branch) => git(bare, "rev-parse", `refs/heads/${branch}`),
    };
  };

  const close = async (): Promise<void> => {
    await http.close();
    await daemon.stop(2_000);
    await sshd?.process.stop(2_000);
    await rm(root, { recursive: true, force: true });
  };
  return {
    root: repos,
    ...(sshd === undefined ? {} : { ssh: sshd.access }),
    createRepo,
    httpRequests: seen,
    close,
    [Symbol.asyncDispose]: close,
  };
}
