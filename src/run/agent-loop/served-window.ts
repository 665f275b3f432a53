/**
 * @module run/agent-loop/served-window
 * The window a run sizes against where its server serves less than configured — the one Ollama
 * has the model loaded with, or one an overflow refusal named — and the server-side cut of a
 * prompt, seen in a reply's prompt count.
 */

import type { PromptCount } from "../../turn/run-turn.js";
import { loadedWindowIn, revealedWindowIn } from "../../wire/loaded-window.js";
import type { LoopRun } from "./run.js";

/** How far the estimate must stand above the reported count before the server's window is asked for. */
const SUSPECT_RATIO = 1.2;

/** How far above the window the estimate must stand for the cut to be said. */
const CUT_MARGIN = 1.1;

/** The window Ollama has the run's model loaded with, from the runtime's cache or `/api/ps`; says once per run when that cannot be read. */
async function loadedWindow(run: LoopRun, fresh = false): Promise<number | undefined> {
  const { config, options, settings } = run;
  const answer = await loadedWindowIn(run.state, config, { ...(options.signal ? { signal: options.signal } : {}), now: settings.now, fresh });
  if (answer.garbage && !run.served.unreadableSaid) {
    run.served.unreadableSaid = true;
    run.onNotice(
      "The endpoint's /api/ps did not answer with a list of loaded models, so the window it serves is not known; the run goes on with the window it was given.",
    );
  }
  return answer.window;
}

/**
 * The window a run's requests are sized against: the smallest of `config.contextLength`, a window
 * an overflow refusal from this endpoint named, and — with compaction on — the one Ollama has the
 * model loaded with (asked once, then cached on the runtime). Undefined where none is known. @internal
 */
export async function sizingWindow(run: LoopRun): Promise<number | undefined> {
  const { settings, config } = run;
  const windows = [settings.contextLength, revealedWindowIn(run.state, config, config.model)];
  if (settings.compact) windows.push(await loadedWindow(run));
  const known = windows.filter((window): window is number => typeof window === "number" && window > 0);
  return known.length > 0 ? Math.min(...known) : undefined;
}

/**
 * runTurn's `checkPromptCount` for one step: a count that came back well under the estimate is
 * weighed against the served window; one at the window, or pinned under it where Ollama keeps
 * half of it, may have been cut and is not calibrated from. Where the estimate is clearly above
 * the window too, the cut is said, once per step. @internal
 */
export function promptCheck(run: LoopRun, step: number): (count: PromptCount) => Promise<boolean> {
  return async ({ reported, estimate }) => {
    if (!(reported > 0) || !(estimate >= reported * SUSPECT_RATIO)) return false;
    // The model has just answered, so it is loaded now even where the list lacked it before the request.
    const window = (await loadedWindow(run, true)) ?? revealedWindowIn(run.state, run.config, run.config.model);
    if (window === undefined || reported > window || reported < window / 2) return false;
    if (estimate > window * CUT_MARGIN) {
      run.served.countCut = true;
      if (run.served.cutStep !== step) {
        run.served.cutStep = step;
        const next = run.settings.compact
          ? "The next request is folded to fit it."
          : "Turn compaction on (compact: true with a compaction task) to fold the transcript to fit, or load the model with a larger window.";
        run.onNotice(
          `The server cut the prompt to its ${window}-token window: it counted ${reported} prompt tokens for a request estimated at about ${estimate}, so the model did not see all of it. ${next}`,
        );
      }
    }
    return true;
  };
}
