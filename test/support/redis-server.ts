/**
 * Starts and stops a real `redis-server` for the Redis backend's tests.
 *
 * Each server listens on a free loopback port with persistence off (`--save "" --appendonly
 * no`), is ready once it answers PING, and is stopped by its PID. `kill()` ends it at once with
 * SIGKILL, as a crash would, and `restart()` starts it again on the same port, empty. Where no
 * `redis-server` binary is found (`AGENT_CORE_REDIS_SERVER`, else on PATH, else
 * /usr/bin/redis-server), the files that need one are skipped with one line saying why.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import { describe } from "vitest";
import { freePort } from "./llama-server.js";

/** The redis-server binary to run, or undefined where there is none. */
export function redisBinary(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [
    env.AGENT_CORE_REDIS_SERVER,
    ...(env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, "redis-server")),
    "/usr/bin/redis-server",
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

/** `describe` for a file that needs redis-server: skipped, with one line, where there is none. */
export function describeRedis(name: string, body: () => void): void {
  if (redisBinary() === undefined) {
    console.log(`${name}: skipped, no redis-server binary (install Debian's redis-server, or set AGENT_CORE_REDIS_SERVER)`);
    describe.skip(name, body);
  } else {
    describe(name, body);
  }
}

/** A running redis-server. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The process id of the server now running (changes on restart). */
  readonly pid: number;
  /** Ends the server at once (SIGKILL), as a crash would, and waits for it to go. */
  kill(): Promise<void>;
  /** Starts the server again on the same port, empty, and waits until it answers. */
  restart(): Promise<void>;
  /** Stops the server by its PID and waits for it to go. */
  stop(): Promise<void>;
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()));

/** Whether something on the port answers PING with PONG. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString("utf8").startsWith("+PONG")));
  });
}

async function launch(binary: string, port: number): Promise<ChildProcess> {
  const child = spawn(binary, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  child.once("exit", () => process.removeListener("exit", orphanGuard));
  const deadline = Date.now() + 10_000;
  while (!(await pings(port))) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`redis-server exited before it was ready (${child.exitCode ?? child.signalCode})`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await exited(child);
      throw new Error("redis-server was not ready within 10 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return child;
}

/** Starts a redis-server on a free loopback port and waits until it answers PING. */
export async function startRedis(): Promise<RedisServer> {
  const binary = redisBinary();
  if (binary === undefined) throw new Error("no redis-server binary");
  const port = await freePort();
  let child = await launch(binary, port);
  const kill = async () => {
    child.kill("SIGKILL");
    await exited(child);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid ?? -1;
    },
    kill,
    async restart() {
      await kill();
      child = await launch(binary, port);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = exited(child);
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
