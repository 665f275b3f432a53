/**
 * @module cli/args
 * Reads the `agent-core` command line into a command and its options, and holds each command's
 * help text. A command line that cannot be read is a `usage` failure (exit code 2).
 */
import { parseArgs } from "node:util";
import { CliFailure } from "./errors.js";

const EXIT_CODE_TEXT = `Exit codes:
  0    done
  1    the run or the probe failed (the reason is printed)
  2    the command line could not be read
  3    nothing answered at the URL
  4    the endpoint refused the key (401 or 403)
  5    the URL answered, but not as an OpenAI-compatible API (an HTML page, say)
  6    the endpoint does not know the model, or lists none
  7    the server is still loading the model (it answered 503 "Loading model")
  130  stopped with Ctrl-C`;

/** The help text of each command, and of the command as a whole. */
export const HELP = Object.freeze({
  main: `Usage: agent-core <command> [options]

Commands:
  demo     Run a short agent loop with two tools, printed live, against a simulated
           endpoint or yours
  probe    Find out what an endpoint and a model support, and write the capability
           snapshot importCapabilities loads

Options:
  -h, --help     Show this help; "agent-core <command> --help" shows that
                 command's options
  --version      Print the version
  --verbose      Print the stack trace of a failure

${EXIT_CODE_TEXT}
`,
  demo: `Usage: agent-core demo [--base-url URL --model NAME [--api-key-env VAR] [--header "N: V"]...] [--folder DIR]

Runs one short agent loop with two real tools, list_files (the files of a folder) and
calculate (arithmetic, parsed, never eval'd), and prints it as it happens: the answer as it
streams, the model's thinking dimmed, each tool call and result, every notice, and the
run's metrics at the end.

Without --base-url a simulated llama.cpp server starts on 127.0.0.1 with a scripted model;
it refuses the min_p field once, so the negotiation shows as a notice.

Options:
  --base-url URL      An OpenAI-compatible endpoint, for example http://127.0.0.1:8080/v1
  --model NAME        The model on that endpoint (required with --base-url)
  --api-key-env VAR   The environment variable holding the key; none is sent without it
  --header "N: V"     A header sent with every request (repeatable), such as a router's
                      routing header; its value is never printed
  --folder DIR        The folder list_files may read (default: the current folder)
  --verbose           Print the stack trace of a failure
  -h, --help          Show this help

${EXIT_CODE_TEXT}
`,
  probe: `Usage: agent-core probe URL [--model NAME] [--api-key-env VAR] [--header "N: V"]... [--key-salt-env VAR] [--json] [--snapshot FILE] [--timeout SECONDS]

Finds out, with a handful of tiny requests, what an endpoint and one model on it support:
the served window and where it came from, usage in the stream, the max-tokens spelling,
temperature, reasoning effort rungs, strict tool schemas, whether tool calls are parsed by
the server or left as text, json_schema response_format and assistant prefill. Prints a
table with the server's own words for each refusal, and what the probe spent.

Options:
  --model NAME        The model to probe (default: the first one the endpoint lists)
  --api-key-env VAR   The environment variable holding the key; none is sent without it
  --header "N: V"     A header sent with every request (repeatable), such as a router's
                      routing header; its value is never printed
  --json              Print the report as JSON instead of a table
  --key-salt-env VAR  The environment variable holding the key salt the snapshot fingerprints
                      the key with; give the host the same keySalt, or its keyed entries
                      will not match (default: a random salt, matching no other process)
  --snapshot FILE     Write the capability snapshot (importCapabilities' input) to FILE
  --timeout SECONDS   How long any one request may stay silent (default: 60)
  --verbose           Print the stack trace of a failure
  -h, --help          Show this help

Progress goes to stderr, one line per probe.

${EXIT_CODE_TEXT}
`,
});

/** A command line, read. */
export type Command =
  | { command: "help"; text: string }
  | { command: "version" }
  | { command: "demo"; baseUrl?: string; model?: string; apiKeyEnv?: string; headers?: Record<string, string>; folder?: string; verbose: boolean }
  | {
      command: "probe";
      url: string;
      model?: string | undefined;
      apiKeyEnv?: string | undefined;
      headers?: Record<string, string> | undefined;
      keySaltEnv?: string | undefined;
      json: boolean;
      snapshot?: string | undefined;
      timeoutSeconds?: number | undefined;
      verbose: boolean;
    };

function usage(message: string, command: keyof typeof HELP): CliFailure {
  return new CliFailure("usage", `${message} (see "agent-core ${command === "main" ? "" : `${command} `}--help").`);
}

/** Checks a URL is absolute http(s), answering a usage failure otherwise. */
export function checkUrl(value: string, command: keyof typeof HELP): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usage(`"${value}" is not a URL; give one like http://127.0.0.1:8080/v1`, command);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw usage(`"${value}" is not an http or https URL`, command);
  return value;
}

type OptionTable = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** The header names a request's own plumbing sets, which --header may not replace. */
const RESERVED_HEADERS = /^(?:content-type|content-length|host|transfer-encoding|connection)$/i;

/**
 * Reads repeated `--header "Name: value"` options into a headers record; a usage failure names
 * the header, never its value.
 */
export function readHeaders(given: unknown, command: keyof typeof HELP): Record<string, string> | undefined {
  const list = Array.isArray(given) ? (given as string[]) : typeof given === "string" ? [given] : [];
  if (list.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const item of list) {
    const colon = item.indexOf(":");
    const name = colon === -1 ? item.trim() : item.slice(0, colon).trim();
    const value = colon === -1 ? "" : item.slice(colon + 1).trim();
    if (colon === -1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw usage(`--header takes "Name: value"; "${name.slice(0, 40)}" is not a header name followed by a colon`, command);
    if (value === "" || /[\r\n\0]/.test(value)) throw usage(`--header ${name} needs a value on one line after the colon`, command);
    if (RESERVED_HEADERS.test(name)) throw usage(`--header ${name} is set by the request itself and cannot be given`, command);
    headers[name] = value;
  }
  return headers;
}

interface Read {
  values: Record<string, string | string[] | boolean | undefined>;
  positionals: string[];
}

/** The options a user may reach for that take a key on the command line, which the command never does. */
const KEY_ON_THE_LINE = /^--(?:api-key|key|token)(?:=|$)/;

/** Node's words for an unknown option, without its advice about positionals (which ends on an unclosed quote). */
function unknownOption(error: unknown): string | undefined {
  if (!(error instanceof Error) || (error as { code?: unknown }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return undefined;
  const option = /^Unknown option '([^']*)'/.exec(error.message)?.[1];
  return option === undefined ? undefined : `"${option}" is not an option`;
}

function read(args: string[], options: OptionTable, command: keyof typeof HELP, positionals: boolean): Read {
  const keyed = args.find((arg) => KEY_ON_THE_LINE.test(arg));
  if (keyed !== undefined && !(keyed.split("=")[0]!.slice(2) in options)) {
    throw usage(
      `${keyed.split("=")[0]} is not an option: the command takes no key on the command line, where the shell history and the process list would show it; put the key in an environment variable and name the variable with --api-key-env VAR`,
      command,
    );
  }
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" }, verbose: { type: "boolean" } },
      allowPositionals: positionals,
      strict: true,
    });
    return { values: parsed.values as Read["values"], positionals: parsed.positionals };
  } catch (error) {
    throw usage(unknownOption(error) ?? (error instanceof Error ? error.message.replace(/\.$/, "") : String(error)), command);
  }
}

/**
 * Reads the command line (without the node and script arguments) into a command.
 *
 * Throws a `usage` {@link CliFailure} for an unknown command or option, a missing value or a URL
 * that is not one.
 */
export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic === "demo" || topic === "probe") return { command: "help", text: HELP[topic] };
    return { command: "help", text: HELP.main };
  }
  if (first === "--version" || first === "-v") return { command: "version" };
  if (first === "demo") {
    const { values } = read(
      rest,
      {
        "base-url": { type: "string" },
        model: { type: "string" },
        "api-key-env": { type: "string" },
        header: { type: "string", multiple: true },
        folder: { type: "string" },
      },
      "demo",
      false,
    );
    if (values.help) return { command: "help", text: HELP.demo };
    const baseUrl = values["base-url"] as string | undefined;
    const model = values.model as string | undefined;
    if (baseUrl !== undefined) checkUrl(baseUrl, "demo");
    if (baseUrl !== undefined && !model) throw usage("--base-url needs --model NAME too", "demo");
    if (baseUrl === undefined && model !== undefined) throw usage("--model is for a real endpoint; give --base-url URL too", "demo");
    const headers = readHeaders(values.header, "demo");
    if (baseUrl === undefined && headers !== undefined) throw usage("--header is for a real endpoint; give --base-url URL too", "demo");
    return {
      command: "demo",
      ...(baseUrl !== undefined ? { baseUrl } : {}),
      ...(model !== undefined ? { model } : {}),
      ...(values["api-key-env"] !== undefined ? { apiKeyEnv: values["api-key-env"] as string } : {}),
      ...(headers !== undefined ? { headers } : {}),
      ...(values.folder !== undefined ? { folder: values.folder as string } : {}),
      verbose: values.verbose === true,
    };
  }
  if (first === "probe") {
    const { values, positionals } = read(
      rest,
      {
        model: { type: "string" },
        "api-key-env": { type: "string" },
        "key-salt-env": { type: "string" },
        header: { type: "string", multiple: true },
        json: { type: "boolean" },
        snapshot: { type: "string" },
        timeout: { type: "string" },
      },
      "probe",
      true,
    );
    if (values.help) return { command: "help", text: HELP.probe };
    if (positionals.length === 0) throw usage("probe needs the endpoint's URL", "probe");
    if (positionals.length > 1) throw usage(`probe takes one URL, not ${positionals.length}`, "probe");
    const url = checkUrl(positionals[0] as string, "probe");
    const headers = readHeaders(values.header, "probe");
    let timeoutSeconds: number | undefined;
    if (values.timeout !== undefined) {
      timeoutSeconds = Number(values.timeout);
      if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0)
        throw usage(`--timeout takes a number of seconds above zero, not "${String(values.timeout)}"`, "probe");
    }
    return {
      command: "probe",
      url,
      ...(values.model !== undefined ? { model: values.model as string } : {}),
      ...(values["api-key-env"] !== undefined ? { apiKeyEnv: values["api-key-env"] as string } : {}),
      ...(values["key-salt-env"] !== undefined ? { keySaltEnv: values["key-salt-env"] as string } : {}),
      ...(headers !== undefined ? { headers } : {}),
      json: values.json === true,
      ...(values.snapshot !== undefined ? { snapshot: values.snapshot as string } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      verbose: values.verbose === true,
    };
  }
  throw usage(`"${first}" is not a command; the commands are demo and probe`, "main");
}

/** Reads the key salt from the variable --key-salt-env names, failing clearly where it is unset or empty. */
export function readKeySalt(variable: string | undefined, env: Record<string, string | undefined>): string | undefined {
  if (variable === undefined) return undefined;
  const value = env[variable];
  if (value === undefined || value === "") throw usage(`--key-salt-env names ${variable}, which is not set`, "probe");
  return value;
}

/** Reads the key from the variable --api-key-env names, failing clearly where it is unset or empty. */
export function readApiKey(variable: string | undefined, env: Record<string, string | undefined>, command: keyof typeof HELP): string | undefined {
  if (variable === undefined) return undefined;
  const value = env[variable];
  if (value === undefined || value === "") throw usage(`--api-key-env names ${variable}, which is not set`, command);
  return value;
}
