/**
 * @module run/agent-loop/checks
 * What a step asks of each call it would dispatch, in order: whether its arguments match its
 * tool's schema, then what the run's approve policy says — run it, answer it here, or hold it for
 * a person — each told as an event.
 */

import { askPolicy, denialText } from "../approval.js";
import { invalidArgumentsText } from "../argument-validation.js";
import { preview, type CallCheck, type RunCallsOptions } from "../run-calls.js";
import type { LoopRun } from "./run.js";

const RUN: CallCheck = Object.freeze({ kind: "run" });

/** The check runCalls asks of each call a step would dispatch; absent where the run checks nothing. @internal */
export function stepCheck(run: LoopRun): RunCallsOptions["check"] | undefined {
  const { checker, tools } = run;
  const approve = run.settings.approve;
  if (!checker && !approve) return undefined;
  return async (request) => {
    const { id, name } = request;
    const issues = checker?.check(request, tools.definitions.get(name));
    if (issues) {
      run.onEvent({ kind: "invalid-arguments", id, name, issues });
      return { kind: "answer", ok: false, content: invalidArgumentsText(name, issues) };
    }
    if (!approve) return RUN;
    const verdict = await askPolicy(approve, request, run.onNotice);
    if (verdict.kind === "allow") return RUN;
    if (verdict.kind === "deny") {
      run.onEvent({ kind: "approval-decided", id, name, approved: false, by: "policy", ...(verdict.reason ? { reason: verdict.reason } : {}) });
      return { kind: "answer", ok: false, content: denialText(verdict.reason) };
    }
    run.onEvent({ kind: "approval-requested", id, name, args: preview(request.args) });
    return { kind: "hold" };
  };
}
