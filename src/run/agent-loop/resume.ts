/**
 * @module run/agent-loop/resume
 * Taking a paused run up again: its state read and checked, a person's decisions read against the
 * calls that wait for them, and the paused step finished — approved calls run, denied ones
 * answered, every answer written in call order up to the first call still waiting.
 */

import type { ToolMessage } from "../../shapes/config.js";
import type { ToolCallOutcome, ToolCallRequest } from "../../text/tool-calls.js";
import { quietly } from "../../text/safe-calls.js";
import { denialText, readDecisions, type ReadVerdict } from "../approval.js";
import { runCalls, STOPPED_BEFORE_CALL, type OpenCall, type ReadCall } from "../run-calls.js";
import { parseRunState, type RunState } from "../run-state.js";
import { dispatchFor, noteUsed } from "./calls.js";
import type { ResumeAgentLoopOptions } from "./options.js";
import type { LoopRun } from "./run.js";

/** A paused run as resumeAgentLoop reads it before anything runs. */
export interface ReadResume {
  saved: RunState;
  decisions: Map<string, ReadVerdict>;
}

/** The requests of the calls that wait for a person, in call order. */
export function heldRequests(open: readonly OpenCall[]): ToolCallRequest[] {
  return open.flatMap((entry) => (entry.kind === "held" ? [entry.request] : []));
}

/**
 * Reads the state and the decisions a resume was handed; throws RunStateError or
 * ApprovalDecisionError, before anything runs, for either that cannot be used. @internal
 */
export function readResume(given: ResumeAgentLoopOptions): ReadResume {
  const options = (given && typeof given === "object" ? given : {}) as Partial<ResumeAgentLoopOptions>;
  const saved = parseRunState(options.state);
  const decisions = readDecisions(
    options.decisions,
    heldRequests(saved.open).map((request) => request.id),
  );
  return { saved, decisions };
}

function readOf(request: ToolCallRequest): ReadCall {
  return { call: { id: request.id, type: "function", function: { name: request.name, arguments: JSON.stringify(request.args) } }, request };
}

/**
 * Finishes the paused step's open calls with the decisions: tells each decision, runs the approved
 * calls and answers the denied ones (never telling a call to onToolCall a second time), then
 * writes every answer in call order up to the first call still waiting, and returns the calls
 * still open from it on. A stop, or an onMessage that throws, answers the waiting calls as not
 * run, writes everything, and is thrown. @internal
 */
export async function settleOpen(run: LoopRun, open: readonly OpenCall[], decisions: ReadonlyMap<string, ReadVerdict>, step: number): Promise<OpenCall[]> {
  const { options, settings } = run;
  const decided: ReadCall[] = [];
  for (const request of heldRequests(open)) {
    const verdict = decisions.get(request.id);
    if (!verdict) continue;
    const approved = verdict.kind === "allow";
    run.onEvent({
      kind: "approval-decided",
      id: request.id,
      name: request.name,
      approved,
      by: "person",
      ...(verdict.reason ? { reason: verdict.reason } : {}),
    });
    decided.push(readOf(request));
  }
  const signal = options.signal;
  const outcome = await runCalls(decided, {
    dispatch: dispatchFor(run),
    ...(signal ? { signal } : {}),
    parallel: settings.parallel,
    // runCalls' documented name for dedupeToolCalls.
    dedupe: settings.dedupeToolCalls,
    announce: false,
    route: (read) => {
      const verdict = decisions.get(read.request.id);
      return verdict?.kind === "allow" ? { kind: "dispatch", request: read.request } : { kind: "answer", ok: false, content: denialText(verdict?.reason) };
    },
    onToolResult: (result) => quietly(options.onToolResult, result),
    onEvent: run.onEvent,
    now: settings.now,
  });
  run.toolCalls.push(...outcome.outcomes);
  noteUsed(run, outcome);
  const answers = new Map(outcome.outcomes.map((entry) => [entry.id, entry]));
  let failure = outcome.failure;
  const left: OpenCall[] = [];
  for (const entry of open) {
    let answer: ToolCallOutcome | undefined = entry.kind === "answered" ? entry.outcome : answers.get(entry.request.id);
    if (!failure && (left.length > 0 || !answer)) {
      left.push(answer ? { kind: "answered", outcome: answer } : entry);
      continue;
    }
    answer ??= notRun(run, (entry as { request: ToolCallRequest }).request);
    const message: ToolMessage = { role: "tool", tool_call_id: answer.id, content: answer.content };
    try {
      await run.tell(message, step);
    } catch (error) {
      failure ??= { error };
    }
  }
  run.tools.endStep();
  if (failure) throw failure.error;
  return left;
}

/** Answers a waiting call as not run, the run having stopped first, and tells the watchers. */
function notRun(run: LoopRun, request: ToolCallRequest): ToolCallOutcome {
  const content = STOPPED_BEFORE_CALL;
  quietly(run.options.onToolResult, { id: request.id, name: request.name, ok: false, content });
  run.onEvent({ kind: "tool-result", id: request.id, name: request.name, ok: false, content });
  const outcome: ToolCallOutcome = { id: request.id, name: request.name, args: request.args, ok: false, content };
  run.toolCalls.push(outcome);
  return outcome;
}
