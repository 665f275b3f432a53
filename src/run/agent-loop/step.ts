/**
 * @module run/agent-loop/step
 * One step's request: the body built by buildBody for each attempt, sent by runTurn, reported
 * once to onRequest as first built, and a reply cut off at the ceiling said and, where asked,
 * continued.
 */

import type OpenAI from "openai";
import type { Endpoint, Message, ModelParams, RetryPolicy, Turn, TurnUsage } from "../../shapes/config.js";
import type { EndpointCapabilities, ModelCapabilities } from "../../wire/capabilities.js";
import { firstTokenMs, timeoutMs } from "../../wire/client.js";
import { continueTurn } from "../../wire/continuation.js";
import { learnServerIn } from "../../wire/capabilities-learn.js";
import type { RunEventInput } from "../events.js";
import { buildBody, type RequestBody, type ToolOrder } from "../../wire/request-body.js";
import { runTurnIn } from "../../turn/run-turn.js";
import type { StepHead } from "./tools.js";
import type { RuntimeState } from "../../state/state.js";
import { nonNegativeNumber, positiveNumber } from "../../text/guards.js";

/** What one step sends and how it reports. */
export interface StepRequest {
  config: Endpoint & ModelParams & RetryPolicy;
  /** The system prompt and tools this step declares. */
  head: StepHead;
  /** The transcript as sent: hook context on the question, the system prompt not yet on top. */
  messages: readonly Message[];
  toolOrder: ToolOrder | undefined;
  /** The window the guard weighs the request against. */
  limit: number | undefined;
  maxContinuations: number;
  signal: AbortSignal | undefined;
  emit: (event: RunEventInput) => void;
  notice: (text: string) => void;
  /** Hears the request as first built. */
  onRequest: (body: RequestBody) => void;
  /** Waits between attempts (retry backoff, the loading poll); absent is runTurn's timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The clock the loading wait is measured on; absent is runTurn's. */
  now?: () => number;
}

/** What a step's request came back with. */
export interface StepReply {
  /** The turn, continuations joined. */
  turn: Turn;
  /** The usage the first request reported, before any continuation. */
  first: TurnUsage;
  /** The request as first built. */
  sent: RequestBody;
}

/** Sends one step's request and reads its reply back. @internal */
export async function sendStep(state: RuntimeState, client: OpenAI, supports: EndpointCapabilities, request: StepRequest): Promise<StepReply> {
  const { config, head, signal } = request;
  const messages: Message[] = head.system ? [{ role: "system", content: head.system }, ...request.messages] : [...request.messages];
  // A server that holds tool arguments to a grammar gets the relaxed schemas from the first step.
  if (head.tools.length > 0) await learnServerIn(state, config, { signal });
  let first: RequestBody | undefined;
  let last: RequestBody | undefined;
  const build = (current: EndpointCapabilities, model?: ModelCapabilities): RequestBody => {
    const body = buildBody(config, current, model, messages, head.tools, request.toolOrder);
    last = body;
    if (!first) {
      first = body;
      request.onRequest(body);
    }
    return body;
  };
  const idleMs = timeoutMs(config);
  const firstChunkMs = firstTokenMs(config);
  const streaming = {
    ...(signal ? { signal } : {}),
    onOutput: (text: string) => request.emit({ kind: "output", text }),
    onThinking: (text: string) => request.emit({ kind: "thinking", text }),
    ...(idleMs !== undefined ? { idleMs } : {}),
    ...(firstChunkMs !== undefined ? { firstChunkMs } : {}),
  };
  // 0 is a value (no wait), as runTurn reads it; only absent or unreadable takes runTurn's default.
  const loadingSeconds = nonNegativeNumber(config.loadingTimeoutSeconds);
  let turn = await runTurnIn(state, client, supports, build, {
    ...streaming,
    model: config.model,
    droppable: Object.keys(config.extraBody ?? {}),
    ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
    ...(request.limit !== undefined ? { contextLimit: request.limit } : {}),
    ...(loadingSeconds !== undefined ? { loadingTimeoutMs: loadingSeconds * 1000 } : {}),
    ...(request.sleep ? { sleep: request.sleep } : {}),
    ...(request.now ? { now: request.now } : {}),
    onNotice: request.notice,
  });
  const firstUsage = turn.usage;
  if (turn.finishReason === "length") {
    request.notice(`The reply was cut off at the ${positiveNumber(config.maxTokens) ?? "server's"}-token ceiling (maxTokens).`);
    if (request.maxContinuations > 0 && last) {
      turn = await continueTurn(client, supports, last, turn, {
        ...streaming,
        model: config.model,
        maxContinuations: request.maxContinuations,
        onNotice: request.notice,
      });
    }
  }
  return { turn, first: firstUsage, sent: first ?? last! };
}
