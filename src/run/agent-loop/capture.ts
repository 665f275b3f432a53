/**
 * @module run/agent-loop/capture
 * What a run stopped before calls that wait for a person saves: its transcript and the step's
 * open calls, and everything else the loop would have carried into its next step, as plain JSON.
 */

import type { OpenCall } from "../run-calls.js";
import { RUN_STATE_VERSION, type RunState } from "../run-state.js";
import { questionIndex, type LoopRun } from "./run.js";

/** The run as it stands before the open calls of `step`, as a run state: a fresh copy, plain JSON throughout. @internal */
export function captureRunState(run: LoopRun, open: readonly OpenCall[], step: number): RunState {
  const { account, tools } = run;
  const prints = account.prints();
  const state: RunState = {
    version: RUN_STATE_VERSION,
    step,
    messages: run.transcript,
    open: [...open],
    turn: run.lastTurn!,
    question: questionIndex(run),
    hooks: { context: run.context, preface: run.preface },
    shortlist: run.shortlist,
    tools: tools.saved(),
    used: run.used,
    toolCalls: run.toolCalls,
    usage: account.totals,
    ledger: account.ledger,
    budget: account.used !== undefined ? { used: account.used } : {},
    ...(prints.sent || prints.recorded ? { cache: prints } : {}),
    compactionWarned: run.compactionWarned,
  };
  // Through JSON, so what is handed back is data alone and shares nothing with the run.
  return JSON.parse(JSON.stringify(state)) as RunState;
}
