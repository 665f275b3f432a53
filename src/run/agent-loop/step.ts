/**
 * @module run/agent-loop/step
 * One step's request and its reply: the body built by buildBody for each attempt, sent by
 * runTurn, reported once to onRequest as first built; a reply cut off at the ceiling said and,
 * where asked, continued; calls written as text recovered; and the turn accounted for.
 */

import type { Message, Turn, TurnUsage } from "../../shapes/config.js";
import { firstTokenMs, timeoutMs } from "../../wire/client.js";
import type { EndpointCapabilities, ModelCapabilities } from "../../wire/capabilities.js";
import { continueTurn } from "../../wire/continuation.js";
import { learnServerIn } from "../../wire/capabilities-learn.js";
import { buildBodyIn, type RequestBody } from "../../wire/request-body.js";
import type { StreamTurnOptions } from "../../wire/stream.js";
import { toolsJsonCharsIn } from "../../wire/tools-cache.js";
import { runTurnIn, type RunTurnOptions } from "../../turn/run-turn.js";
import { positiveNumber } from "../../text/guards.js";
import { quietly } from "../../text/safe-calls.js";
import { recoverToolCalls } from "../../text/tool-calls.js";
import { withContextIn } from "../hooks.js";
import { withSystemOption } from "./system-option.js";
import { questionIndex, type LoopEndpoint, type LoopRun } from "./run.js";
import { promptCheck } from "./served-window.js";
import type { StepHead } from "./tools.js";

/** What a step's request came back with. */
interface StepReply {
  /** The turn, continuations joined. */
  turn: Turn;
  /** The usage the first request reported, before any continuation. */
  first: TurnUsage;
  /** The request as first built. */
  sent: RequestBody;
}

/**
 * Sends one step's request — the shortlist's alone where `exclusive` — and returns its turn,
 * accounted for in a usage event and told to onTurn. @internal
 */
export async function sendStep(run: LoopRun, endpoint: LoopEndpoint, step: number, exclusive: boolean): Promise<Turn> {
  const head = run.tools.head(exclusive ? run.shortlist : undefined);
  const sentFrom = run.transcript.slice();
  const messages = run.context ? withContextIn(run.state, run.transcript, questionIndex(run), run.context, run.preface) : sentFrom;
  const reply = await request(run, endpoint, head, messages, step);
  // Tools described in the prompt (the server refused them) come back only as text.
  const inPrompt = head.tools.length > 0 && reply.sent.tools === undefined;
  const turn = recoverFromText(run, reply.turn, head.tools.length > 0, inPrompt);
  run.lastTurn = turn;
  const { sent } = reply;
  const metrics = run.account.record({
    sent: { messages: sent.messages, ...(sent.tools ? { tools: sent.tools } : {}) },
    transcript: sentFrom,
    system: head.system,
    turn,
    first: reply.first,
    charsPerToken: endpoint.charsPerToken(),
    ...(sent.tools && sent.tools.length > 0 ? { toolChars: toolsJsonCharsIn(run.state, sent.tools) } : {}),
  });
  run.onEvent({ kind: "usage", totals: { ...run.account.totals }, turn: metrics, ledger: run.account.ledger.slice() });
  quietly(run.options.onTurn, turn, step);
  return turn;
}

/**
 * The stream's options for a step's requests, first and continued alike.
 *
 * The stream's documented names are in milliseconds: the endpoint's `requestTimeoutSeconds` is
 * its `idleMs` and `firstTokenSeconds` its `firstChunkMs`, converted here, once, by timeoutMs
 * and firstTokenMs.
 */
function streamOptions(run: LoopRun): Pick<StreamTurnOptions, "signal" | "idleMs" | "firstChunkMs" | "onOutput" | "onThinking"> {
  const signal = run.options.signal;
  const idleMs = timeoutMs(run.config);
  const firstChunkMs = firstTokenMs(run.config);
  return {
    ...(signal ? { signal } : {}),
    onOutput: (text: string) => run.onEvent({ kind: "output", text }),
    onThinking: (text: string) => run.onEvent({ kind: "thinking", text }),
    ...(idleMs !== undefined ? { idleMs } : {}),
    ...(firstChunkMs !== undefined ? { firstChunkMs } : {}),
  };
}

/**
 * runTurn's options for a step: the one place the loop's names meet runTurn's documented ones.
 * `contextLength` is runTurn's `contextLimit` and `loadingTimeoutSeconds` its
 * `loadingTimeoutMs`; the run's clock is runTurn's `now`, the one the loading wait is measured on.
 */
function turnOptions(run: LoopRun, stream: ReturnType<typeof streamOptions>): RunTurnOptions {
  const { settings, config } = run;
  return {
    ...stream,
    model: config.model,
    droppable: Object.keys(config.extraBody ?? {}),
    ...(settings.maxRetries !== undefined ? { maxRetries: settings.maxRetries } : {}),
    ...(settings.contextLength !== undefined ? { contextLimit: settings.contextLength } : {}),
    ...(settings.loadingTimeoutSeconds !== undefined ? { loadingTimeoutMs: settings.loadingTimeoutSeconds * 1000 } : {}),
    ...(settings.sleep ? { sleep: settings.sleep } : {}),
    now: settings.now,
    onNotice: run.onNotice,
    toolsInPrompt: config.toolsInPrompt !== false,
  };
}

/** Says once per run that a tool goes with strict off, though every request and attempt finds it again. */
function sayStrictOff(run: LoopRun, text: string, tool: string): void {
  if (run.strictOffSaid.has(tool)) return;
  run.strictOffSaid.add(tool);
  run.onNotice(text);
}

async function request(run: LoopRun, endpoint: LoopEndpoint, head: StepHead, transcript: readonly Message[], step: number): Promise<StepReply> {
  const { client, supports } = endpoint;
  const { config, settings } = run;
  const messages: Message[] = withSystemOption(head.system, transcript);
  // A server that holds tool arguments to a grammar gets the relaxed schemas from the first step.
  if (head.tools.length > 0) await learnServerIn(run.state, config, run.options.signal ? { signal: run.options.signal } : {});
  let first: RequestBody | undefined;
  let last: RequestBody | undefined;
  const build = (current: EndpointCapabilities, model?: ModelCapabilities): RequestBody => {
    const body = buildBodyIn(run.state, config, current, model, messages, head.tools, settings.toolOrder, {
      onNotice: (text, tool) => sayStrictOff(run, text, tool),
      onFieldNotice: (text) => sayStrictOff(run, text, `field:${text}`),
      toolsInPrompt: config.toolsInPrompt !== false,
    });
    last = body;
    if (!first) {
      first = body;
      quietly(run.options.onRequest, body, step);
    }
    return body;
  };
  const stream = streamOptions(run);
  let turn = await runTurnIn(run.state, client, supports, build, { ...turnOptions(run, stream), checkPromptCount: promptCheck(run, step) });
  const firstUsage = turn.usage;
  if (turn.finishReason === "length") {
    const ceiling = positiveNumber(config.maxTokens);
    run.onNotice(
      ceiling !== undefined
        ? `The reply was cut off at the ${ceiling}-token ceiling (maxTokens).`
        : "The reply was cut off at the server's own token ceiling (no maxTokens was set).",
    );
    if (settings.maxContinuations > 0 && last) {
      turn = await continueTurn(client, supports, last, turn, {
        ...stream,
        model: config.model,
        maxContinuations: settings.maxContinuations,
        onNotice: run.onNotice,
      });
    }
  }
  return { turn, first: firstUsage, sent: first ?? last! };
}

/**
 * Recovers the tool calls a model wrote into its reply as text, where the run declared tools and
 * looks for them (or sent them in the prompt): in the answer, or — when the turn has no answer
 * text — in the reasoning, where a model that writes its calls inside its thinking leaves them. A
 * turn with no answer, no call and nothing recovered is said in a notice rather than passing
 * silently as an answer.
 */
function recoverFromText(run: LoopRun, turn: Turn, hasTools: boolean, inPrompt: boolean): Turn {
  if (turn.toolCalls.length > 0) return turn;
  const empty = turn.content.trim() === "";
  if ((run.settings.recoverToolCalls || inPrompt) && hasTools) {
    const source = empty ? turn.reasoning : turn.content;
    const { tools } = run;
    const found = source.trim() === "" ? undefined : recoverToolCalls(source, tools.knownNames(), { tools: [...tools.definitions.values()] });
    if (found !== undefined && found.calls.length > 0) {
      const count = found.calls.length;
      const where = empty ? "inside its reasoning" : "as text";
      if (!inPrompt || empty) {
        run.onNotice(
          `The model wrote ${count} tool call${count === 1 ? "" : "s"} ${where}, which the server's tool-call parser did not pick up; ${count === 1 ? "it was" : "they were"} recovered and run.`,
        );
      }
      return empty ? { ...turn, toolCalls: found.calls, reasoning: found.text } : { ...turn, toolCalls: found.calls, content: found.text };
    }
  }
  if (empty) {
    const reasoning = turn.reasoning.trim() === "" ? "" : " (only reasoning)";
    run.onNotice(`The model's reply held no answer text and no tool call${reasoning}; finish reason "${turn.finishReason || "none"}".`);
  }
  return turn;
}
