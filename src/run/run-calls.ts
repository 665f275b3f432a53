/**
 * @module run-calls
 * The tools between two turns: a step's calls read, run and written into the transcript, with
 * every call answered whatever happens.
 *
 * {@link readCalls} reads what the model asked for: arguments repaired (or `{}` where they could
 * not be read), and ids made distinct within the step. {@link runCalls} runs them one after
 * another or together, makes an identical call once, and answers every call with a tool message
 * in the order the calls were made — a stop included, so the transcript it leaves is one an
 * endpoint accepts — unless its `check` holds a call, which leaves that call and every one after
 * it open for the caller to answer later, in order. {@link preview} cuts a long argument or
 * result for a watcher.
 */

import type { ToolMessage } from "../shapes/config.js";
import { errorMessage } from "../text/errors.js";
import type { RunEventInput } from "./events.js";
import type { ToolCallOutcome, ToolCallRequest, ToolCallResult } from "../text/tool-calls.js";
import { quietly } from "../text/safe-calls.js";
import { cut, MAX_RESULT_CHARS, preview, readToolResult, text, type ReadCall } from "./run-calls-read.js";

export { MAX_RESULT_CHARS, PREVIEW_CHARS, preview, readCalls, readToolResult } from "./run-calls-read.js";
export type { ReadCall, ReadCallsOptions } from "./run-calls-read.js";

/** What a call the run was stopped during is answered with. */
export const STOPPED_DURING_CALL = "Stopped before this call finished.";

/** What a call the run never reached is answered with. */
export const STOPPED_BEFORE_CALL = "Not run: the run stopped first.";

/**
 * Runs one tool call for the host: the call and a signal that aborts when the run stops.
 *
 * What it returns is what the model reads: a string as it is; an MCP-style
 * `{ content: [{ type: "text", text }], isError }` as its text (failed where `isError`); a list of
 * text parts as their text; anything else as its JSON. What it throws, Error or not, is read by
 * errorMessage and handed to the model as a failed result.
 */
export type Dispatch = (request: ToolCallRequest, signal: AbortSignal) => unknown;

/** How a step answers one call: hand it to dispatch (as this request), or answer it here. */
export type CallRoute = { kind: "dispatch"; request: ToolCallRequest } | { kind: "answer"; request?: ToolCallRequest; ok: boolean; content: string };

/**
 * What a step's check says of a routed call before it is dispatched: run it, answer it here, or
 * hold it, leaving it open for the caller to answer later.
 */
export type CallCheck = { kind: "run" } | { kind: "answer"; ok: boolean; content: string } | { kind: "hold" };

/**
 * A call {@link runCalls} left open, in call order from the first held one: held by the check,
 * with the request it was routed to, or answered after a held one, with its outcome, its tool
 * message not yet written.
 */
export type OpenCall = { kind: "held"; request: ToolCallRequest } | { kind: "answered"; outcome: ToolCallOutcome };

/** Options for {@link runCalls}. */
export interface RunCallsOptions {
  /** Runs a call for the host. */
  dispatch: Dispatch;
  /** Stops the step: a call in flight is answered {@link STOPPED_DURING_CALL}, one not reached {@link STOPPED_BEFORE_CALL}. */
  signal?: AbortSignal | undefined;
  /** Run the step's calls together rather than one after another. @default false */
  parallel?: boolean | undefined;
  /**
   * Make an identical call (same name, same repaired arguments) once and hand its answer to the
   * repeat: `false` dispatches everything, a predicate is asked per call. @default true
   */
  dedupe?: (boolean | ((request: ToolCallRequest) => boolean)) | undefined;
  /** Decides how a readable call is answered; the default dispatches it as it is. */
  route?: ((read: ReadCall) => CallRoute | Promise<CallRoute>) | undefined;
  /**
   * Asked of each call route sends to dispatch, after it is told to onToolCall: run it, answer it
   * here, or hold it. A held call and every call after it are left open (their results still
   * land), unless the step stops, which answers a held call {@link STOPPED_BEFORE_CALL}. What it
   * throws answers the call as failed. Absent runs every call.
   */
  check?: ((request: ToolCallRequest) => CallCheck | Promise<CallCheck>) | undefined;
  /** Tell onToolCall and the events of each call; off for calls already told of. @default true */
  announce?: boolean | undefined;
  /** Told of every call, as dispatch would be handed it (empty args where unreadable); not awaited. */
  onToolCall?: ((request: ToolCallRequest) => unknown) | undefined;
  /** Told of every result, with the whole text the model reads; not awaited. */
  onToolResult?: ((result: ToolCallResult) => unknown) | undefined;
  /** Hears each tool message in transcript order, awaited; what it throws stops the step. */
  onMessage?: ((message: ToolMessage) => unknown) | undefined;
  /** Hears tool-call and tool-result events, text cut by {@link preview}. */
  onEvent?: ((event: RunEventInput) => unknown) | undefined;
  /** The longest result the model is handed; longer text is cut with a note. @default 100000 */
  maxResultChars?: number | undefined;
  /** The longest preview in an event. @default 500 */
  previewChars?: number | undefined;
  /** The clock a call's duration is measured on. @default Date.now */
  now?: (() => number) | undefined;
}

/** What a step's calls came to. */
export interface CallsRun {
  /** One tool message per call, in the order the calls were made, up to the first held call. */
  messages: ToolMessage[];
  /** One outcome per call answered, in call order, those left open included. */
  outcomes: ToolCallOutcome[];
  /** The calls left open, from the first held one on, in call order; empty where none was held. */
  open: OpenCall[];
  /** The tools that were dispatched (not answered here, not repeats), in order. */
  used: string[];
  /** What stopped the step, where something did: the signal's reason, or what onMessage threw. */
  failure?: { error: unknown } | undefined;
}

interface Answer {
  ok: boolean;
  content: string;
  durationMs?: number | undefined;
  threw?: boolean | undefined;
}

/** A call the check held: neither dispatched nor answered. */
interface Held {
  readonly held: true;
}

const HELD: Held = Object.freeze({ held: true });

function isHeld(value: object): value is Held {
  return value === HELD;
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
 * is reported as `failure`. A routed call `check` holds is neither dispatched nor answered: the
 * calls after it still run, but from it on nothing is written, and all of them come back `open`,
 * in call order, for the caller to answer.
 *
 * Rejects with a TypeError naming `dispatch`, before any call runs, where dispatch is not a function.
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
  if (typeof options?.dispatch !== "function") {
    throw new TypeError(`dispatch must be a function that runs a tool call; given ${options?.dispatch === null ? "null" : typeof options?.dispatch}.`);
  }
  const now = options.now ?? Date.now;
  const maxResultChars = typeof options.maxResultChars === "number" && options.maxResultChars >= 1 ? Math.floor(options.maxResultChars) : MAX_RESULT_CHARS;
  const stop = new AbortController();
  // The caller's signal aborts `stop` through onAbort below; no AbortSignal.any, whose composite
  // signal the caller's long-lived signal would keep, with every listener on it, for its lifetime.
  const signal = stop.signal;
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

  /** Settles when the step stops, and lets go of its listener once the call settles first. */
  const stopped = (settled: Promise<unknown>): Promise<Answer> =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve({ ok: false, content: STOPPED_DURING_CALL });
      const onStop = (): void => resolve({ ok: false, content: STOPPED_DURING_CALL });
      signal.addEventListener("abort", onStop, { once: true });
      void settled.finally(() => signal.removeEventListener("abort", onStop));
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
    return Promise.race([attempt, stopped(attempt)]);
  };

  const announce = options.announce !== false;
  /** Routes a call and tells the watchers of it; answers it here where it is not dispatched, or holds it. */
  const prepare = async (index: number): Promise<Answer | ToolCallRequest | Held> => {
    const read = list[index]!;
    if (failure) return { ok: false, content: STOPPED_BEFORE_CALL };
    if (read.error) {
      if (announce) {
        quietly(options.onToolCall, { ...read.request, args: {} });
        emitCall(options, read.request.id, read.request.name, {});
      }
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
    if (announce) {
      quietly(options.onToolCall, request);
      emitCall(options, request.id, request.name, request.args);
    }
    if (route.kind === "answer") return { ok: route.ok, content: text(route.content) };
    if (failure) return { ok: false, content: STOPPED_BEFORE_CALL };
    if (options.check) {
      let verdict: CallCheck;
      try {
        verdict = await options.check(request);
      } catch (error) {
        verdict = { kind: "answer", ok: false, content: errorMessage(error) };
      }
      if (verdict?.kind === "hold") return HELD;
      if (verdict?.kind === "answer") return { ok: verdict.ok === true, content: text(verdict.content) };
      if (failure) return { ok: false, content: STOPPED_BEFORE_CALL };
    }
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

  const messages: ToolMessage[] = [];
  /** Each call's outcome once it is answered, by index. */
  const outcomes: Array<ToolCallOutcome | undefined> = [];
  /** The calls left open so far, each with its index, in call order. */
  const open: Array<{ index: number; call: OpenCall }> = [];
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

  /** Keeps a call's outcome, and writes it, or leaves it open behind a held call. */
  const settle = async (index: number, entry: ToolCallOutcome | Held): Promise<void> => {
    if (isHeld(entry)) {
      open.push({ index, call: { kind: "held", request: requests[index]! } });
      return;
    }
    outcomes[index] = entry;
    if (open.length > 0) open.push({ index, call: { kind: "answered", outcome: entry } });
    else await write(index, entry);
  };

  try {
    if (options.parallel) {
      const pending: Promise<ToolCallOutcome | Held>[] = [];
      for (let index = 0; index < list.length; index += 1) {
        // Routed in call order, so a load is seen by the calls after it; dispatched together.
        const prepared = await prepare(index);
        if (isHeld(prepared)) pending.push(Promise.resolve(HELD));
        else pending.push(("args" in prepared ? execute(prepared) : Promise.resolve(prepared)).then((outcome) => land(index, outcome)));
      }
      for (let index = 0; index < list.length; index += 1) await settle(index, await pending[index]!);
    } else {
      for (let index = 0; index < list.length; index += 1) {
        const prepared = await prepare(index);
        await settle(index, isHeld(prepared) ? HELD : land(index, "args" in prepared ? await execute(prepared) : prepared));
      }
    }
    // A step that stops answers what it held, so the transcript it leaves is still whole.
    if (failure && open.length > 0) {
      for (const { index, call } of open.splice(0)) {
        const entry = call.kind === "answered" ? call.outcome : land(index, { ok: false, content: STOPPED_BEFORE_CALL });
        outcomes[index] = entry;
        await write(index, entry);
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  const done: CallsRun = {
    messages,
    outcomes: outcomes.filter((entry): entry is ToolCallOutcome => entry !== undefined),
    used,
    open: open.map((entry) => entry.call),
  };
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
