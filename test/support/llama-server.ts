/**
 * Starts and stops a real llama.cpp `llama-server` for the real-server tier (`test/real/`).
 *
 * The tier runs when `AGENT_CORE_LLAMA_SERVER` names a llama-server binary and
 * `AGENT_CORE_LLAMA_MODELS` a folder holding `tiny.gguf` and `tiny-think.gguf`; otherwise every
 * file of the tier is skipped with one line saying why. Each server listens on a free loopback
 * port, is ready once `GET /health` answers 200, and is stopped by its PID; a server that does not
 * come up within a bounded wait, or exits, fails the test that asked for it with one line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe } from "vitest";

/** The two tiny random-weight models the tier uses. */
export type LlamaModel = "tiny" | "tiny-think";

/** Where the tier's binary and models are, or why the tier is skipped. */
export type LlamaTier = { binary: string; models: string } | { skip: string };

const ENABLE = "set AGENT_CORE_LLAMA_SERVER to a llama-server binary and AGENT_CORE_LLAMA_MODELS to a folder holding tiny.gguf and tiny-think.gguf";

/** Reads the tier's two variables; a missing or unusable path is a reason to skip, said once. */
export function llamaTier(env: NodeJS.ProcessEnv = process.env): LlamaTier {
  const binary = env.AGENT_CORE_LLAMA_SERVER;
  const models = env.AGENT_CORE_LLAMA_MODELS;
  if (!binary || !models) return { skip: `real llama.cpp tier skipped: ${ENABLE}` };
  return { binary, models };
}

/** Which problem stops a server from starting at all, in one line, or undefined when none does. */
export function startProblem(binary: string, modelFile: string): string | undefined {
  if (!existsSync(binary)) return `llama-server not found at ${binary}`;
  try {
    if (!statSync(binary).isFile()) return `llama-server at ${binary} is not a file`;
    accessSync(binary, constants.X_OK);
  } catch {
    return `llama-server at ${binary} is not executable`;
  }
  if (!existsSync(modelFile)) return `model file ${modelFile} is missing`;
  return undefined;
}

/**
 * `describe` for a real-server file: runs it when the tier is enabled, otherwise skips it and
 * prints the one line that says why and how to enable it.
 */
export function describeReal(name: string, body: () => void): void {
  const tier = llamaTier();
  if ("skip" in tier) {
    console.log(`${name}: ${tier.skip}`);
    describe.skip(name, body);
  } else {
    describe(name, body);
  }
}

/** A running llama-server. */
export interface LlamaServer {
  /** The OpenAI-compatible base URL, ending in `/v1`. */
  readonly baseUrl: string;
  /** The server's origin, for its native routes (`/health`, `/props`, `/slots`). */
  readonly origin: string;
  /** The port it listens on. */
  readonly port: number;
  /** The model id the listing gives (the model file's path). */
  readonly model: string;
  /** The process id the server is stopped by. */
  readonly pid: number;
  /** What the server wrote to stderr and stdout so far (the last 64 KB). */
  output(): string;
  /** Stops the server by its PID (SIGTERM, then SIGKILL after two seconds) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Options of {@link startLlamaServer}. */
export interface LlamaServerOptions {
  /** @default "tiny" */
  model?: LlamaModel;
  /** The context size, `-c`. @default 2048 */
  contextSize?: number;
  /** Pass `--jinja` (chat templates with tool calling). @default true */
  jinja?: boolean;
  /** More flags, appended as given (`-np 2`, `--api-key K`, `--reasoning-format none`). */
  args?: readonly string[];
  /** How long to wait for `/health` to answer 200, in milliseconds. @default 20000 */
  readyMs?: number;
  /** Listen on this port instead of a free one found for it (no retry when it is taken). */
  port?: number;
}

/** A free loopback port, from the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once("exit", () => resolve()));
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split("\n")
    .filter((line) => line.trim() !== "");
  return lines[lines.length - 1]?.trim() ?? "(no output)";
}

/** Stops a child by its PID and waits for it to go. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = exited(child);
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 2_000);
  await gone;
  clearTimeout(timer);
}

/**
 * Starts a llama-server on a free loopback port with the flags a test needs and waits until
 * `/health` answers 200. Rejects with one line (and leaves no process behind) when the binary or
 * model is unusable, the server exits, or it is not ready within `readyMs`.
 */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const tier = llamaTier();
  if ("skip" in tier) throw new Error(tier.skip);
  const modelFile = join(tier.models, `${options.model ?? "tiny"}.gguf`);
  const problem = startProblem(tier.binary, modelFile);
  if (problem) throw new Error(problem);
  if (options.port !== undefined) return launch(tier.binary, modelFile, options.port, options);
  let lastError: Error | undefined;
  // A port found free can be taken before the server binds it: try a fresh one a few times.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const port = await freePort();
    try {
      return await launch(tier.binary, modelFile, port, options);
    } catch (error) {
      lastError = error as Error;
      if (!/bind|address already in use/i.test(lastError.message)) throw lastError;
    }
  }
  throw lastError ?? new Error("llama-server did not start");
}

async function launch(binary: string, modelFile: string, port: number, options: LlamaServerOptions): Promise<LlamaServer> {
  const args = ["-m", modelFile, "--host", "127.0.0.1", "--port", String(port), "-c", String(options.contextSize ?? 2048), "-t", "2", "--no-warmup"];
  if (options.jinja ?? true) args.push("--jinja");
  args.push(...(options.args ?? []));
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-65_536);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  // A test runner that dies must not leave the server behind.
  const orphanGuard = () => child.kill("SIGKILL");
  process.once("exit", orphanGuard);
  child.once("exit", () => process.removeListener("exit", orphanGuard));
  const spawnError = new Promise<never>((_, reject) =>
    child.once("error", (error) => reject(new Error(`llama-server could not be started: ${error.message}`))),
  );
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyMs ?? 20_000);
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`llama-server exited before it was ready (${child.exitCode ?? child.signalCode}): ${lastLine(output)}`);
      }
      if (Date.now() > deadline) throw new Error(`llama-server was not ready within ${options.readyMs ?? 20_000} ms: ${lastLine(output)}`);
      const ready = await Promise.race([
        fetch(`${origin}/health`, { signal: AbortSignal.timeout(1_000) }).then(
          (response) => response.status === 200,
          () => false,
        ),
        spawnError,
      ]);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  const listing = (await (await fetch(`${origin}/v1/models`)).json()) as { data?: { id?: string }[] };
  return {
    baseUrl: `${origin}/v1`,
    origin,
    port,
    model: listing.data?.[0]?.id ?? modelFile,
    pid: child.pid ?? -1,
    output: () => output,
    stop: () => stopChild(child),
  };
}
