/**
 * @module cli/main
 * The `agent-core` command: reads the command line, runs `demo` or `probe`, and turns whatever
 * happened into one line and an exit code. Ctrl-C stops the run through an AbortSignal, so what
 * the command started is closed before it exits.
 */
import { writeFile } from "node:fs/promises";
import { parseCommandLine, readApiKey, readKeySalt, type Command } from "./args.js";
import type { runDemo } from "./demo.js";
import { CliFailure, EXIT_CODES, keyRefused, readFailure } from "./errors.js";
import { colorAllowed, formatProbeReport, stylesFor, type Output } from "./output.js";
import { readListing } from "./listing.js";
import type { probeEndpoint } from "./probe.js";
import { redactUrls } from "./redact.js";

/** What the command reads and writes, so a test can run it in-process. */
export interface CliIo {
  /** Where results go. */
  stdout: Output;
  /** Where progress and failures go. */
  stderr: Output;
  /** The environment keys are read from. */
  env: Record<string, string | undefined>;
  /** Aborted when the person presses Ctrl-C. */
  signal?: AbortSignal | undefined;
  /** The package's version, for --version. */
  version?: string | undefined;
}

/** The commands' runners, handed in by the entry that assembles the command. */
export interface CliCommands {
  /** Runs `agent-core demo`. */
  demo: typeof runDemo;
  /** Runs `agent-core probe`. */
  probe: typeof probeEndpoint;
}

function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth += 1) {
    parts.push(current instanceof Error ? (current.stack ?? `${current.name}: ${current.message}`) : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join("\n  caused by: ");
}

async function demo(command: Extract<Command, { command: "demo" }>, io: CliIo, runDemo: CliCommands["demo"]): Promise<void> {
  const apiKey = readApiKey(command.apiKeyEnv, io.env, "demo");
  if (command.baseUrl !== undefined && command.model !== undefined) {
    const listing = await readListing(
      {
        ...(apiKey ? { apiKey } : {}),
        ...(command.headers ? { headers: command.headers } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
        timeoutSeconds: 30,
      },
      command.baseUrl.replace(/\/+$/, ""),
    );
    // A listing that failed is no reason not to try: the run waits for a loading model and says what a refusal said.
    if (Array.isArray(listing) && listing.length > 0 && !listing.some((entry) => entry.id === command.model)) {
      io.stderr.write(
        `agent-core: ${redactUrls(command.baseUrl)} does not list "${command.model}" (it lists ${listing
          .slice(0, 5)
          .map((entry) => entry.id)
          .join(", ")}); trying it anyway.\n`,
      );
    }
  }
  await runDemo({
    stdout: io.stdout,
    color: colorAllowed(io.stdout, io.env),
    ...(command.baseUrl !== undefined ? { baseUrl: command.baseUrl } : {}),
    ...(command.model !== undefined ? { model: command.model } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(command.headers ? { headers: command.headers } : {}),
    ...(command.folder !== undefined ? { folder: command.folder } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
  });
}

async function probe(command: Extract<Command, { command: "probe" }>, io: CliIo, probeEndpoint: CliCommands["probe"]): Promise<void> {
  const apiKey = readApiKey(command.apiKeyEnv, io.env, "probe");
  const keySalt = readKeySalt(command.keySaltEnv, io.env);
  const report = await probeEndpoint({
    baseUrl: command.url,
    ...(command.model !== undefined ? { model: command.model } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(command.headers ? { headers: command.headers } : {}),
    ...(keySalt ? { keySalt } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
    ...(command.timeoutSeconds !== undefined ? { timeoutSeconds: command.timeoutSeconds } : {}),
    onProgress: (line) => io.stderr.write(`${redactUrls(line)}…\n`),
  });
  if (command.snapshot !== undefined) {
    try {
      await writeFile(command.snapshot, `${JSON.stringify(report.snapshot, null, 2)}\n`);
    } catch (error) {
      throw new CliFailure("failed", `Could not write the snapshot to ${command.snapshot}: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  }
  if (command.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  const styles = stylesFor(colorAllowed(io.stdout, io.env));
  const where =
    command.snapshot !== undefined
      ? `Wrote the capability snapshot to ${command.snapshot}; load it at boot with importCapabilities.${
          apiKey && !keySalt ? " Its keyed entry matches only a runtime with the probe's key salt: pass --key-salt-env to set one the host shares." : ""
        }`
      : "Pass --snapshot FILE to keep what was learned for importCapabilities.";
  io.stdout.write(`${formatProbeReport(report, styles)}\n${where}\n`);
}

/**
 * Runs the command line (without the node and script arguments) and returns the exit code.
 *
 * Prints one line for a failure, to stderr, with the stack trace only under --verbose.
 */
export async function main(argv: readonly string[], io: CliIo, commands: CliCommands): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(argv);
  } catch (error) {
    const failure = readFailure(error, "");
    io.stderr.write(`agent-core: ${redactUrls(failure.message)}\n`);
    return failure.exitCode;
  }
  if (command.command === "help") {
    io.stdout.write(command.text);
    return EXIT_CODES.ok;
  }
  if (command.command === "version") {
    io.stdout.write(`${io.version ?? "unknown"}\n`);
    return EXIT_CODES.ok;
  }
  const url = command.command === "probe" ? command.url : (command.baseUrl ?? "the simulated endpoint");
  try {
    if (command.command === "demo") await demo(command, io, commands.demo);
    else await probe(command, io, commands.probe);
    return EXIT_CODES.ok;
  } catch (error) {
    const reason: unknown = io.signal?.aborted ? io.signal.reason : undefined;
    const failure = io.signal?.aborted
      ? CliFailure.is(reason)
        ? reason
        : new CliFailure("interrupted", "Stopped before it finished.", reason)
      : keyRefused(readFailure(error, url, command.model), command.apiKeyEnv);
    io.stderr.write(`agent-core: ${redactUrls(failure.message)}\n`);
    if (command.verbose) io.stderr.write(`${redactUrls(causeChain(failure.cause ?? failure))}\n`);
    return failure.exitCode;
  }
}

/**
 * Runs the command for the real process: wires Ctrl-C to an abort (a second Ctrl-C exits at
 * once), sets the exit code, and makes sure the process ends even if a socket lingers.
 */
export async function runCli(argv: readonly string[], commands: CliCommands, version?: string): Promise<void> {
  const controller = new AbortController();
  const onInterrupt = (): void => {
    if (controller.signal.aborted) process.exit(EXIT_CODES.interrupted);
    controller.abort(new CliFailure("interrupted", "Stopped by Ctrl-C; everything the command started has been closed."));
  };
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);
  let code: number;
  try {
    code = await main(
      argv,
      { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal, ...(version ? { version } : {}) },
      commands,
    );
  } finally {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
  }
  process.exitCode = code;
  // Everything is closed by now; this only ends a process some library left a handle open in.
  setTimeout(() => process.exit(code), 1_000).unref();
}
