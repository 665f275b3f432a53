/**
 * @module run-calls
 * The tools between two turns: a step's calls read, run and written into the transcript, with
 * every call answered whatever happens.
 *
 * {@link readCalls} reads what the model asked for: arguments repaired (or `{}` where they could
 * not be read), and ids made distinct within the step. {@link runCalls} runs them one after
 * another or together, makes an identical call once, and answers every call with a tool message
 * in the order the calls were made — a stop included, so the transcript it leaves is one an
 * endpoint accepts. {@link preview} cuts a long argument or result for a watcher.
 */

import type { ToolCall, ToolMessage } from "../shapes/config.js";
import { errorMessage } from "../text/errors.js";
import type { RunEventInput } from "./events.js";
import { parseToolArguments, ToolArgumentsError, type ToolCallOutcome, type ToolCallRequest, type ToolCallResult } from "../text/tool-calls.js";
import { quietly } from "../text/safe-calls.js";
import { positiveInteger } from "../text/guards.js";

/** What a call the run was stopped during is answered with. */
export const STOPPED_DURING_CALL = "Stopped before this call finished.";

/** What a call the run never reached is answered with. */
export const STOPPED_BEFORE_CALL = "Not run: the run stopped first.";

/** The longest preview a watcher is handed, in characters, unless told otherwise. */
export const PREVIEW_CHARS = 500;

/** The longest tool result the model is handed, in characters, unless told otherwise. */
export const MAX_RESULT_CHARS = 100_000;

/**
 * Runs one tool call for the host: the call and a signal that aborts when the run stops.
 *
 * What it returns is what the model reads: a string as it is; an MCP-style
 * `{ content: [{ type: "text", text }], isError }` as its text (failed where `isError`); a list of
 * text parts as their text; anything else as its JSON. What it throws, Error or not, is read by
 * errorMessage and handed to the model as a failed result.
 */
export type Dispatch = (request: ToolCallRequest, signal: AbortSignal) => unknown;

/** A call as a step read it: what the transcript keeps, what dispatch is handed, and why it cannot run. */
export interface ReadCall {
  /** The call as the transcript keeps it: repaired arguments as JSON, `{}` where they could not be read. */
  call: ToolCall;
  /** The request as dispatch would be handed it: repaired arguments, the model's own text as `raw`. */
  request: ToolCallRequest;
  /** Why the arguments could not be read, where they could not. */
  error?: ToolArgumentsError;
}

/** Options for {@link readCalls}. */
export interface ReadCallsOptions {
  /** The turn stopped at its token ceiling, so arguments that do not parse were cut off. @default false */
  truncated?: boolean;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
}

/**
 * Reads a step's tool calls: arguments repaired, unreadable ones replayed as `{}`, ids distinct.
 *
 * Arguments go through parseToolArguments; what still is not an object keeps its
 * ToolArgumentsError (kind `truncated` with `truncated: true`) and is replayed as `{}`, since a
 * server that parses replayed arguments would refuse the originals on every later request. A call
 * with no id, or one already used in the step, is given `call_<index>` (suffixed until distinct).
 *
 * @param calls - The turn's tool calls.
 * @param options - `truncated` when the turn stopped at its ceiling.
 */
export function readCalls(calls: readonly ToolCall[], options: ReadCallsOptions = {}): ReadCall[] {
  const list = Array.isArray(calls) ? calls : [];
  const ids = new Set<string>();
  return list.map((entry, index) => {
    const name = text(entry?.function?.name);
    const raw = typeof entry?.function?.arguments === "string" ? entry.function.arguments : entry?.function?.arguments === undefined ? "" : JSON.stringify(entry.function.arguments) ?? "";
    let id = text(entry?.id);
    if (id === "" || ids.has(id)) {
      let candidate = `call_${index}`;
      for (let suffix = 1; ids.has(candidate); suffix += 1) candidate = `call_${index}_${suffix}`;
      id = candidate;
    }
    ids.add(id);
    let args: Record<string, unknown> = {};
    let error: ToolArgumentsError | undefined;
    try {
      args = parseToolArguments(raw, { truncated: options.truncated === true, toolName: name });
    } catch (caught) {
      error = ToolArgumentsError.is(caught) ? caught : new ToolArgumentsError({ kind: "malformed", raw, toolName: name, cause: caught });
    }
    let replayed = "{}";
    try {
      replayed = JSON.stringify(args) ?? "{}";
    } catch {
      replayed = "{}";
    }
    const read: ReadCall = {
      call: { id, type: "function", function: { name, arguments: replayed } },
      request: { id, name, args, raw },
    };
    if (error) read.error = error;
    return read;
  });
}

/**
 * Cuts a long argument or result to a length a watcher can show, saying how long it was.
 *
 * A string is cut; anything else is written as JSON first. Text at or under `maxChars` comes back
 * as it is; longer text keeps its head and ends with `… [N chars]`.
 *
 * @param value - The text or value to show.
 * @param maxChars - The most characters to keep. @default 500
 */
export function preview(value: unknown, maxChars: number = PREVIEW_CHARS): string {
  let source: string;
  if (typeof value === "string") source = value;
  else {
    try {
      source = JSON.stringify(value) ?? String(value);
    } catch {
      source = Object.prototype.toString.call(value);
    }
  }
  const limit = positiveInteger(maxChars) ?? PREVIEW_CHARS;
  if (source.length <= limit) return source;
  return `${source.slice(0, limit)}… [${source.length} chars]`;
}

/** How a step answers one call: hand it to dispatch (as this request), or answer it here. */
export type CallRoute =
  | { kind: "dispatch"; request: ToolCallRequest }
  | { kind: "answer"; request?: ToolCallRequest; ok: boolean; content: string };

/** Options for {@link runCalls}. */
export interface RunCallsOptions {
  /** Runs a call for the host. */
  dispatch: Dispatch;
  /** Stops the step: a call in flight is answered {@link STOPPED_DURING_CALL}, one not reached {@link STOPPED_BEFORE_CALL}. */
  signal?: AbortSignal;
  /** Run the step's calls together rather than one after another. @default false */
  parallel?: boolean;
  /**
   * Make an identical call (same name, same repaired arguments) once and hand its answer to the
   * repeat: `false` dispatches everything, a predicate is asked per call. @default true
   */
  dedupe?: boolean | ((request: ToolCallRequest) => boolean);
  /** Decides how a readable call is answered; the default dispatches it as it is. */
  route?: (read: ReadCall) => CallRoute | Promise<CallRoute>;
  /** Told of every call, as dispatch would be handed it (empty args where unreadable); not awaited. */
  onToolCall?: (request: ToolCallRequest) => unknown;
  /** Told of every result, with the whole text the model reads; not awaited. */
  onToolResult?: (result: ToolCallResult) => unknown;
  /** Hears each tool message in transcript order, awaited; what it throws stops the step. */
  onMessage?: (message: ToolMessage) => unknown;
  /** Hears tool-call and tool-result events, text cut by {@link preview}. */
  onEvent?: (event: RunEventInput) => unknown;
  /** The longest result the model is handed; longer text is cut with a note. @default 100000 */
  maxResultChars?: number;
  /** The longest preview in an event. @default 500 */
  previewChars?: number;
  /** The clock a call's duration is measured on. @default Date.now */
  now?: () => number;
}

/** What a step's calls came to. */
export interface CallsRun {
  /** One tool message per call, in the order the calls were made. */
  messages: ToolMessage[];
  /** One outcome per call, in the same order. */
  outcomes: ToolCallOutcome[];
  /** The tools that were dispatched (not answered here, not repeats), in order. */
  used: string[];
  /** What stopped the step, where something did: the signal's reason, or what onMessage threw. */
  failure?: { error: unknown };
}

interface Answer {
  ok: boolean;
  content: string;
  durationMs?: number;
  threw?: boolean;
}

function partsText(parts: unknown[]): string | undefined {
  if (!parts.every((part) => part && typeof part === "object" && typeof (part as { type?: unknown }).type === "string")) return undefined;
  return parts
    .map((part) => {
      const typed = part as { type: string; text?: unknown };
      return typed.type === "text" && typeof typed.text === "string" ? typed.text : JSON.stringify(part);
    })
    .join("\n");
}

/** Reads what a dispatch returned as the text the model reads and whether the tool succeeded. */
export function readToolResult(value: unknown): { ok: boolean; content: string } {
  if (typeof value === "string") return { ok: true, content: value };
  if (value === undefined || value === null) return { ok: true, content: "" };
  if (Array.isArray(value)) {
    const joined = partsText(value);
    if (joined !== undefined) return { ok: true, content: joined };
  } else if (typeof value === "object") {
    const record = value as { content?: unknown; isError?: unknown };
    if (Array.isArray(record.content)) {
      const joined = partsText(record.content);
      if (joined !== undefined) return { ok: record.isError !== true, content: joined };
    }
    if (typeof record.content === "string") return { ok: record.isError !== true, content: record.content };
  }
  try {
    return { ok: true, content: JSON.stringify(value) ?? String(value) };
  } catch {
    return { ok: true, content: String(value) };
  }
}

function cut(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  return `${content.slice(0, maxChars)}\n[The result was cut here: ${content.length - maxChars} more characters were left out.]`;
}

function keyOf(request: ToolCallRequest): string {
  try {
    return `${request.name}\u0000${JSON.stringify(request.args)}`;
  } catch {
    return `${request.name}\u0000${request.raw}\u0000unkeyed`;
  }
}

/**
 * Runs a step's calls and answers every one of them, in the order they were made.
 *
 * Each call is read by {@link readCalls} beforehand; one whose arguments could not be read is
 * answered with the error's message and never dispatched. A readable call goes through `route`
 * (the loop answers load_tools there), then to dispatch. An identical call — same name, same
 * repaired arguments — is made once within the step and its answer handed to the repeat under
 * the repeat's own id; two in flight share one request; a call that threw is forgotten, so the
 * repeat is a real retry. Never rejects: a stop (the signal, or onMessage throwing) answers a call
 * in flight {@link STOPPED_DURING_CALL} and one not yet reached {@link STOPPED_BEFORE_CALL}, and
 * is reported as `failure`.
 *
 * @param reads - The step's calls, from readCalls.
 * @param options - dispatch, the signal, parallel, dedupe, route and the listeners.
 * @example
 * ```ts
 * const reads = readCalls(turn.toolCalls, { truncated: turn.finishReason === "length" });
 * const { messages, failure } = await runCalls(reads, { dispatch, signal });
 * ```
 */
export async function runCalls(reads: readonly ReadCall[], options: RunCallsOptions): Promise<CallsRun> {
  const now = options.now ?? Date.now;
  const maxResultChars =
    typeof options.maxResultChars === "number" && options.maxResultChars >= 1 ? Math.floor(options.maxResultChars) : MAX_RESULT_CHARS;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let failure: { error: unknown } | undefined;
  const fail = (error: unknown): void => {
    if (failure) return;
    failure = { error };
    if (!stop.signal.aborted) stop.abort(error);
  };
  const onAbort = (): void => fail(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });

  const shared = new Map<string, Promise<Answer>>();
  const used: string[] = [];
  const list = Array.isArray(reads) ? reads : [];
  const requests: ToolCallRequest[] = list.map((read) => read.request);

  const stopped = (): Promise<Answer> =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, content: STOPPED_DURING_CALL });
      signal.addEventListener("abort", () => resolve({ ok: false, content: STOPPED_DURING_CALL }), { once: true });
    });

  const dispatchOnce = (request: ToolCallRequest): Promise<Answer> => {
    const startedAt = now();
    let attempt: Promise<Answer>;
    try {
      attempt = Promise.resolve(options.dispatch(request, signal)).then(
        (value) => ({ ...readToolResult(value), durationMs: Math.max(0, now() - startedAt) }),
        (error: unknown) => ({ ok: false, content: errorMessage(error), durationMs: Math.max(0, now() - startedAt), threw: true }),
      );
    } catch (error) {
      attempt = Promise.resolve({ ok: false, content: errorMessage(error), durationMs: 0, threw: true });
    }
    return Promise.race([attempt, stopped()]);
  };

  /** Routes a call and tells the watchers of it; answers it here where it is not dispatched. */
  const prepare = async (index: number): Promise<Answer | ToolCallRequest> => {
    const read = list[index]!;
    if (failure) return { ok: false, content: STOPPED_BEFORE_CALL };
    if (read.error) {
      quietly(options.onToolCall, { ...read.request, args: {} });
      emitCall(options, read.request.id, read.request.name, {});
      return { ok: false, content: read.error.message };
    }
    let route: CallRoute;
    try {
      route = options.route ? await options.route(read) : { kind: "dispatch", request: read.request };
    } catch (error) {
      route = { kind: "answer", ok: false, content: errorMessage(error) };
    }
    const request = route.request ?? read.request;
    requests[index] = request;
    quietly(options.onToolCall, request);
    emitCall(options, request.id, request.name, request.args);
    if (route.kind === "answer") return { ok: route.ok, content: text(route.content) };
    if (failure) return { ok: false, content: STOPPED_BEFORE_CALL };
    return request;
  };

  /** Dispatches a routed call, or shares the answer of an identical one made in this step. */
  const execute = (request: ToolCallRequest): Promise<Answer> => {
    const dedupe =
      options.dedupe === undefined ? true : typeof options.dedupe === "function" ? safePredicate(options.dedupe, request) : options.dedupe !== false;
    const key = keyOf(request);
    const running = dedupe ? shared.get(key) : undefined;
    if (running) return running.then((outcome) => ({ ok: outcome.ok, content: outcome.content }));
    used.push(request.name);
    const attempt = dispatchOnce(request);
    if (dedupe) {
      shared.set(key, attempt);
      void attempt.then((outcome) => {
        if ((outcome.threw === true || outcome.content === STOPPED_DURING_CALL) && shared.get(key) === attempt) shared.delete(key);
      });
    }
    return attempt;
  };

  const answer = async (index: number): Promise<Answer> => {
    const prepared = await prepare(index);
    return "args" in prepared ? execute(prepared) : prepared;
  };

  const messages: ToolMessage[] = [];
  const outcomes: ToolCallOutcome[] = [];
  /** Tells the watchers of a result the moment it lands, and shapes what the transcript keeps. */
  const land = (index: number, outcome: Answer): ToolCallOutcome => {
    const request = requests[index]!;
    const content = cut(outcome.content, maxResultChars);
    quietly(options.onToolResult, { id: request.id, name: request.name, ok: outcome.ok, content } satisfies ToolCallResult);
    const event: RunEventInput = { kind: "tool-result", id: request.id, name: request.name, ok: outcome.ok, content: preview(content, options.previewChars) };
    if (outcome.durationMs !== undefined) (event as { durationMs?: number }).durationMs = outcome.durationMs;
    quietly(options.onEvent, event);
    const entry: ToolCallOutcome = { id: request.id, name: request.name, args: request.args, ok: outcome.ok, content };
    if (outcome.durationMs !== undefined) entry.durationMs = outcome.durationMs;
    return entry;
  };
  /** Writes a landed result into the transcript, in call order, and waits for onMessage. */
  const write = async (index: number, entry: ToolCallOutcome): Promise<void> => {
    outcomes.push(entry);
    const message: ToolMessage = { role: "tool", tool_call_id: list[index]!.call.id, content: entry.content };
    messages.push(message);
    if (options.onMessage) {
      try {
        await options.onMessage(message);
      } catch (error) {
        fail(error);
      }
    }
  };

  try {
    if (options.parallel) {
      const pending: Promise<ToolCallOutcome>[] = [];
      for (let index = 0; index < list.length; index += 1) {
        // Routed in call order, so a load is seen by the calls after it; dispatched together.
        const prepared = await prepare(index);
        const answered = "args" in prepared ? execute(prepared) : Promise.resolve(prepared);
        pending.push(answered.then((outcome) => land(index, outcome)));
      }
      for (let index = 0; index < list.length; index += 1) await write(index, await pending[index]!);
    } else {
      for (let index = 0; index < list.length; index += 1) await write(index, land(index, await answer(index)));
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  const done: CallsRun = { messages, outcomes, used };
  if (failure) done.failure = failure;
  return done;
}

function safePredicate(predicate: (request: ToolCallRequest) => boolean, request: ToolCallRequest): boolean {
  try {
    return predicate(request) !== false;
  } catch {
    return false;
  }
}

function emitCall(options: RunCallsOptions, id: string, name: string, args: Record<string, unknown>): void {
  quietly(options.onEvent, { kind: "tool-call", id, name, args: preview(args, options.previewChars) });
}
