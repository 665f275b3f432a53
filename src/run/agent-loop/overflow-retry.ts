/**
 * @module run/agent-loop/overflow-retry
 * A step whose request the endpoint refused as too big for its window: the window the refusal
 * named is remembered for the endpoint, and with compaction on the transcript is folded to fit
 * that window and the request sent once more.
 */

import type { Turn } from "../../shapes/config.js";
import { overflowNumbers } from "../../text/overflow-numbers.js";
import { ContextOverflow } from "../../text/context-overflow.js";
import { rememberRevealedIn } from "../../wire/loaded-window.js";
import { planCompaction } from "../compaction.js";
import { foldTranscript, summariserOf } from "./compact.js";
import type { LoopEndpoint, LoopRun } from "./run.js";
import { sizingWindow } from "./served-window.js";
import { sendStep } from "./step.js";

/**
 * Sends one step's request as sendStep does; where the endpoint refuses it as too big and the
 * run folds (`compact: true` with a summariser), folds the transcript against the window the
 * refusal named (else the window the run knows), forced past any hook's veto, and sends it once
 * more. A second refusal, a run that does not fold, or a transcript with nothing to fold throws
 * the overflow as it came. @internal
 */
export async function sendStepFitting(run: LoopRun, endpoint: LoopEndpoint, step: number, exclusive: boolean): Promise<Turn> {
  try {
    return await sendStep(run, endpoint, step, exclusive);
  } catch (error) {
    if (!ContextOverflow.is(error) || error.source !== "endpoint") throw error;
    const told = overflowNumbers(error.cause);
    if (told.limit !== undefined) rememberRevealedIn(run.state, run.config, run.config.model, told.limit);
    if (!run.settings.compact) throw error;
    const summarise = summariserOf(run);
    const limit = told.limit ?? (await sizingWindow(run));
    if (!summarise || limit === undefined) throw error;
    // The endpoint counted the request over the window, whatever the estimate says: the plan starts from its count.
    const used = Math.max(told.requested ?? 0, limit);
    const plan = planCompaction(run.transcript, { limit, used, charsPerToken: endpoint.charsPerToken() });
    if (!plan || !(await foldTranscript(run, plan, summarise, true))) throw error;
    run.onNotice(`The endpoint refused the request as too long for its ${limit}-token window; the transcript was folded to fit and the request sent again.`);
    return sendStep(run, endpoint, step, exclusive);
  }
}
