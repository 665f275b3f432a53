/**
 * @module run/agent-loop/checks
 * What a step asks of each call it would dispatch, in order: whether its arguments match its
 * tool's schema, then what the run's approve policy says — run it, answer it here, or hold it for
 * a person — each told as an event.
 */

import { askPolicy, denialText } from "../approval.js";
import { invalidArgumentsText, ownArgumentCheck, type OwnArgumentCheck } from "../argument-validation.js";
import { preview, type CallCheck, type RunCallsOptions } from "../run-calls.js";
import type { LoopRun } from "./run.js";

const RUN: CallCheck = Object.freeze({ kind: "run" });

/** A tool's own check asked of a call's arguments; a check that throws leaves the call to the tool. */
async function ownIssues(check: OwnArgumentCheck, args: unknown): Promise<readonly string[] | undefined> {
  try {
    return await check(args);
  } catch {
    return undefined;
  }
}

/** The check runCalls asks of each call a step would dispatch; absent where the run checks nothing. @internal */
export function stepCheck(run: LoopRun): RunCallsOptions["check"] | undefined {
  const { checker, tools } = run;
  const approve = run.settings.approve;
  if (!checker && !approve) return undefined;
  return async (request) => {
    const { id, name } = request;
    const tool = tools.definitions.get(name);
    // A typed tool's own check (zod's) stands in for the JSON Schema one, told and counted alike.
    const own = checker ? ownArgumentCheck(tool) : undefined;
    const found = own ? await ownIssues(own, request.args) : checker?.check(request, tool);
    const issues = found && found.length > 0 ? [...found] : undefined;
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
