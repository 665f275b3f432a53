/**
 * @module cli/errors
 * The `agent-core` command's failures: the exit code each kind of failure ends the process with,
 * and the reading of a caught error as one line a person can act on.
 */

import { AgentCoreError, isModelLoading, UnexpectedReply } from "../index.js";

/** The exit codes of the `agent-core` command, by what happened. */
export const EXIT_CODES = Object.freeze({
  /** The command did what it was asked. */
  ok: 0,
  /** The run or the probe failed for a reason not listed below. */
  failed: 1,
  /** The command line could not be read: an unknown command or option, a missing value. */
  usage: 2,
  /** Nothing answered at the URL: refused, unknown host, timed out. */
  unreachable: 3,
  /** The endpoint refused the key (401 or 403). */
  unauthorized: 4,
  /** Something answered that is not an OpenAI-compatible API (HTML, or JSON of another shape). */
  notOpenAi: 5,
  /** The endpoint does not know the model, or lists none to choose from. */
  unknownModel: 6,
  /** The server is still loading the model (a 503 "Loading model"); try again once it is up. */
  loading: 7,
  /** The person stopped the command (Ctrl-C). */
  interrupted: 130,
});

/** What kind of failure ended the command. */
export type CliFailureKind = Exclude<keyof typeof EXIT_CODES, "ok">;

/**
 * A failure of the `agent-core` command, with the exit code it ends the process with.
 *
 * Its message is the one line the command prints; the error it was read from is the `cause`.
 */
export class CliFailure extends AgentCoreError {
  override readonly name = "CliFailure" as const;
  /** What kind of failure it is. */
  readonly kind: CliFailureKind;
  /** The exit code the process ends with. */
  readonly exitCode: number;

  static {
    AgentCoreError.mark(this, "CliFailure");
  }

  /** Makes the failure of `kind`; `message` is the line the command prints. */
  constructor(kind: CliFailureKind, message: string, cause?: unknown) {
    super({ message, cause });
    this.kind = kind;
    this.exitCode = EXIT_CODES[kind];
  }

  /** Tells a CliFailure from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is CliFailure {
    return AgentCoreError.isNamed(value, "CliFailure", "exitCode");
  }
}

/** What an unauthorized failure advises where the command sent no key. */
export const KEY_ADVICE = "Pass --api-key-env with the variable that holds the key.";

/**
 * An unauthorized failure told for a key that was sent: the endpoint refused that key, so the
 * advice to pass one gives way to checking it; any other failure comes back as it is.
 */
export function keyRefused(failure: CliFailure, variable: string | undefined): CliFailure {
  if (failure.kind !== "unauthorized" || variable === undefined || !failure.message.includes(KEY_ADVICE)) return failure;
  const said = `The key in ${variable} was sent and refused: check it is a key this endpoint accepts.`;
  return new CliFailure("unauthorized", failure.message.replace(KEY_ADVICE, said), failure.cause);
}

const CONNECTION_CODES: Readonly<Record<string, string>> = Object.freeze({
  ECONNREFUSED: "the connection was refused",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be looked up",
  ECONNRESET: "the connection was reset",
  EHOSTUNREACH: "the host cannot be reached",
  ENETUNREACH: "the network cannot be reached",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  UND_ERR_SOCKET: "the connection closed",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed",
});

/** Whether any message down an error's cause chain matches (fetch's "bad port" sits a few causes down); never throws. */
function chainSays(error: unknown, pattern: RegExp): boolean {
  try {
    let current: unknown = error;
    for (let depth = 0; depth < 8 && current && typeof current === "object"; depth += 1) {
      const message = (current as { message?: unknown }).message;
      if (typeof message === "string" && pattern.test(message)) return true;
      current = (current as { cause?: unknown }).cause;
    }
    return typeof current === "string" && pattern.test(current);
  } catch {
    return false;
  }
}

/** Finds a network error code (ECONNREFUSED, …) anywhere down an error's cause chain. */
function connectionCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current && typeof current === "object"; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code in CONNECTION_CODES) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      for (const inner of errors) {
        const found = connectionCode(inner);
        if (found) return found;
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a caught value said: the first text found in it, and the first HTTP status on the way. */
interface ErrorReading {
  text: string;
  status?: number | undefined;
}

/** Where a failure keeps its words, in the order they are read: its own, its body's, its cause's. */
const WORD_KEYS = ["message", "detail", "msg", "error", "errors", "reason", "body", "cause"] as const;

function readInto(value: unknown, into: ErrorReading, depth: number, seen: Set<object>): void {
  if (depth > 6 || value === null || value === undefined) return;
  if (typeof value === "string") {
    if (!into.text) into.text = value.trim();
    return;
  }
  if (typeof value !== "object" || seen.has(value)) return;
  seen.add(value);
  const record = value as Record<string, unknown>;
  for (const status of [record.status, record.statusCode, record.code]) {
    if (into.status === undefined && typeof status === "number" && status >= 100 && status < 600) into.status = status;
  }
  for (const key of WORD_KEYS) {
    const inner = record[key];
    for (const item of Array.isArray(inner) ? inner.slice(0, 8) : [inner]) readInto(item, into, depth + 1, seen);
  }
}

/**
 * Reads a caught value as a person would: the first text in it (an SDK error's message, a body's
 * `error.message`, a cause's) and the HTTP status it carries anywhere down that path; never throws.
 */
function readError(error: unknown): ErrorReading {
  const into: ErrorReading = { text: "" };
  try {
    readInto(error, into, 0, new Set());
  } catch {
    // A hostile getter must not turn the reading of a failure into another failure.
  }
  return into;
}

/** Shortens a server's words to one line for a message. */
export function oneLine(text: string, max = 240): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Whether a body or message reads as an HTML page rather than an API's answer. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(?:<!doctype html|<html|<head|<body|<\?xml|<)/i.test(text);
}

/** The server's own words for a failure: the body's message where the SDK parsed one, else the first message found. */
export function wordsOf(error: unknown): string {
  const body = (error as { error?: unknown } | null)?.error;
  if (typeof body === "string") return oneLine(body);
  if (body && typeof body === "object") {
    const message = (body as { message?: unknown }).message;
    if (typeof message === "string") return oneLine(message);
  }
  return oneLine(readError(error).text.replace(/^\d{3}\s+/, ""));
}

const MODEL_WORDS =
  /model[^.]{0,80}(?:does not exist|not found|not exist|is not (?:available|served|loaded)|unknown|no such|invalid model|not a valid model)|(?:unknown|invalid|no such) model|model_not_found/i;

/**
 * Reads a caught error as the command's failure: what happened, in one line that names the URL.
 *
 * A CliFailure passes through; an aborted run is `interrupted`; a network error is
 * `unreachable`; a model still loading is `loading`; 401 and 403 are `unauthorized`; a body that
 * is HTML, or a reply that is no chat completion, is `notOpenAi`; words about
 * an unknown model are `unknownModel`; anything else is `failed` with the server's own words.
 *
 * @param error - What was caught.
 * @param url - The base URL the command was talking to.
 * @param model - The model asked for, where one was.
 */
export function readFailure(error: unknown, url: string, model?: string): CliFailure {
  if (CliFailure.is(error)) return error;
  if (error instanceof Error && (error.name === "AbortError" || error.name === "APIUserAbortError")) {
    return new CliFailure("interrupted", "Stopped before it finished.", error);
  }
  const code = connectionCode(error);
  if (code) return new CliFailure("unreachable", `Could not reach ${url}: ${CONNECTION_CODES[code]} (${code}).`, error);
  const { status } = readError(error);
  const words = wordsOf(error) || oneLine(error instanceof Error ? error.message : String(error));
  if (chainSays(error, /\bbad port\b/i)) {
    return new CliFailure("unreachable", `Could not reach ${url}: fetch refuses to connect to that port; use the port the server listens on.`, error);
  }
  if (error instanceof Error && error.name === "APIConnectionError") {
    return new CliFailure("unreachable", `Could not reach ${url}: ${words || "the connection failed"}.`, error);
  }
  if (error instanceof Error && error.name === "TimeoutError") {
    return new CliFailure("unreachable", `${url} did not answer in time: ${words}`, error);
  }
  if (UnexpectedReply.is(error)) {
    return new CliFailure("notOpenAi", `${error.message} Check the URL ends at the API root, usually /v1.`, error);
  }
  if (isModelLoading(error)) {
    return new CliFailure(
      "loading",
      `${url} is still loading the model (HTTP ${status ?? "?"}: ${words || "no reason given"}); try again once it has loaded.`,
      error,
    );
  }
  if (status === 401 || status === 403) {
    return new CliFailure("unauthorized", `${url} refused the key (HTTP ${status}): ${words || "no reason given"}. ${KEY_ADVICE}`, error);
  }
  if (looksLikeHtml(words)) {
    return new CliFailure(
      "notOpenAi",
      `${url} answered with an HTML page (HTTP ${status ?? "?"}), not an OpenAI-compatible API; check the URL ends at the API root, usually /v1.`,
      error,
    );
  }
  if (model !== undefined && (status === 404 || status === 400 || status === 422) && MODEL_WORDS.test(words)) {
    return new CliFailure("unknownModel", `${url} does not know the model "${model}": ${words}`, error);
  }
  // A 404 from the chat route names the URL tried and, where it lacks one, the /v1 to add.
  if (status === 404 && error instanceof Error && error.message.includes("/chat/completions)")) return new CliFailure("failed", error.message, error);
  if (status !== undefined) return new CliFailure("failed", `${url} answered HTTP ${status}: ${words || "no reason given"}`, error);
  return new CliFailure("failed", words || "The command failed.", error);
}
