/**
 * @module run/agent-loop/calls
 * The model's side of a step in the transcript — its reply, with the calls it made — and those
 * calls run, each answered (or, where the approve policy holds one, left open from it on), with
 * what they used noted for the next run.
 */

import type { AssistantMessage, ToolMessage, Turn } from "../../shapes/config.js";
import type { ToolCallRequest } from "../../text/tool-calls.js";
import { omitOptionalNulls } from "../../text/schema-compat.js";
import { quietly } from "../../text/safe-calls.js";
import { readCalls, runCalls, STOPPED_BEFORE_CALL, type CallsRun, type OpenCall, type ReadCall } from "../run-calls.js";
import { stepCheck } from "./checks.js";
import type { LoopRun } from "./run.js";
import { keepReasoning } from "./reasoning.js";
import { keepProviderFields } from "./provider-fields.js";

/**
 * Appends the model's reply, with the calls it made (and, where it made some, the reasoning
 * behind them as `reasoning_content`), and returns those calls; where the reply
 * cannot be told, each call is answered as not run before the failure goes on. @internal
 */
export async function tellReply(run: LoopRun, turn: Turn, step: number): Promise<ReadCall[]> {
  const reads = readCalls(turn.toolCalls, { truncated: turn.finishReason === "length" });
  const said: AssistantMessage = { role: "assistant", content: turn.content };
  if (reads.length > 0) said.tool_calls = reads.map((read) => read.call);
  keepReasoning(said, turn);
  keepProviderFields(run, said, turn);
  try {
    await run.tell(said, step, turn);
  } catch (error) {
    await answerUnrun(run, reads, step);
    throw error;
  }
  return reads;
}

async function answerUnrun(run: LoopRun, reads: readonly ReadCall[], step: number): Promise<void> {
  for (const read of reads) {
    const message: ToolMessage = { role: "tool", tool_call_id: read.call.id, content: STOPPED_BEFORE_CALL };
    try {
      await run.tell(message, step);
    } catch {
      // The run is already ending on the first failure.
    }
  }
}

/** Hands a call to the host's dispatch, with the nulls a strict server made the model send for optional properties left out. @internal */
export function dispatchFor(run: LoopRun): (request: ToolCallRequest, signal: AbortSignal) => unknown {
  const { options, tools } = run;
  return (request, callSignal) => {
    // A run without tools has no dispatch; a call the model makes anyway is answered as failed.
    if (typeof options.dispatch !== "function") throw new Error(`No tool named ${request.name} is declared in this run.`);
    return options.dispatch({ ...request, args: omitOptionalNulls(request.args, tools.definitions.get(request.name)?.function.parameters) }, callSignal);
  };
}

/** Notes what a step's calls used, for what carries into the next run. @internal */
export function noteUsed(run: LoopRun, outcome: CallsRun): void {
  for (const name of outcome.used) {
    run.tools.touch(name);
    if (!run.used.includes(name)) run.used.push(name);
  }
}

/**
 * Runs a step's calls, answering each in the transcript, and returns the calls left open where
 * one waits for a person (empty otherwise); throws the failure that stopped them. @internal
 */
export async function handleCalls(run: LoopRun, reads: readonly ReadCall[], step: number): Promise<OpenCall[]> {
  const { options, settings, tools } = run;
  const signal = options.signal;
  const check = stepCheck(run);
  const outcome = await runCalls(reads, {
    dispatch: dispatchFor(run),
    ...(signal ? { signal } : {}),
    parallel: settings.parallel,
    // runCalls' documented name for dedupeToolCalls.
    dedupe: settings.dedupeToolCalls,
    route: (read) => tools.route(read, run.transcript),
    ...(check ? { check } : {}),
    onToolCall: (request) => quietly(options.onToolCall, request),
    onToolResult: (result) => quietly(options.onToolResult, result),
    onMessage: (message) => run.tell(message, step),
    onEvent: run.onEvent,
    now: settings.now,
  });
  tools.endStep();
  run.toolCalls.push(...outcome.outcomes);
  noteUsed(run, outcome);
  if (outcome.failure) throw outcome.failure.error;
  return outcome.open;
}
