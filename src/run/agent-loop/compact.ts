/**
 * @module run/agent-loop/compact
 * What may rewrite the transcript before a step's request: the fold `compact: true` asks for
 * once the window is filling, and the host's beforeStep.
 */

import { compactTranscript, planCompaction } from "../compaction.js";
import { replaceTranscript, type LoopEndpoint, type LoopRun } from "./run.js";
import { defaultSummariser } from "./side-tasks.js";
import type { StepBudget } from "./options.js";

/**
 * Folds the transcript where `compact: true` is set and the window is filling, with the
 * compaction task's summary; without a task it says so, once, and leaves the transcript. @internal
 */
export async function compactIfNeeded(run: LoopRun, endpoint: LoopEndpoint): Promise<void> {
  const { settings, account, options } = run;
  const { contextLength } = settings;
  if (!settings.compact || contextLength === undefined) return;
  // planCompaction's documented name for the window is limit.
  const plan = planCompaction(run.transcript, {
    limit: contextLength,
    ...(account.used !== undefined ? { used: account.used } : {}),
    charsPerToken: endpoint.charsPerToken(),
  });
  if (!plan) return;
  const summarise = options.sideTasks?.summarise ?? defaultSummariser(run.state, run.config, run.config.tasks?.compaction, run.onNotice);
  if (!summarise) {
    if (!run.compactionWarned)
      run.onNotice("The window is filling, but compact: true has no compaction task to write the summary, so the transcript was not folded.");
    run.compactionWarned = true;
    return;
  }
  const hooks = settings.hooks
    ? { run: settings.hooks.run, ...(settings.hooks.context ? { context: settings.hooks.context } : {}), onNote: run.onNotice }
    : undefined;
  const signal = options.signal;
  const folded = await compactTranscript(run.transcript, plan, summarise, { ...(hooks ? { hooks } : {}), ...(signal ? { signal } : {}) });
  if (folded !== run.transcript) replaceTranscript(run, folded);
}

/** Hands the transcript to the host's beforeStep and puts a replacement in place, where it returns one. @internal */
export async function applyBeforeStep(run: LoopRun, step: number): Promise<void> {
  const { beforeStep } = run.options;
  if (!beforeStep) return;
  const { account, settings } = run;
  // StepBudget's documented name for the window is limit.
  const budget: StepBudget = {
    ...(account.used !== undefined ? { used: account.used } : {}),
    ...(settings.contextLength !== undefined ? { limit: settings.contextLength } : {}),
    ledger: account.ledger.slice(),
  };
  const replaced = await beforeStep(run.transcript.slice(), step, budget);
  if (!Array.isArray(replaced)) return;
  const same = replaced.length === run.transcript.length && replaced.every((message, index) => message === run.transcript[index]);
  if (!same) replaceTranscript(run, replaced);
}
