/**
 * @module run/agent-loop/compact
 * What may rewrite the transcript before a step's request: the fold `compact: true` asks for
 * once the window is filling, and the host's beforeStep.
 */

import { compactTranscript, planCompaction, type CompactionPlan } from "../compaction.js";
import { replaceTranscript, type LoopEndpoint, type LoopRun } from "./run.js";
import { sizingWindow } from "./served-window.js";
import { defaultSummariser } from "./side-tasks.js";
import type { StepBudget } from "./options.js";

/** The summariser a fold is written with: the host's own, or the compaction task's; undefined without either. @internal */
export function summariserOf(run: LoopRun): ReturnType<typeof defaultSummariser> {
  return run.options.sideTasks?.summarise ?? defaultSummariser(run.state, run.config, run.config.tasks?.compaction, run.onNotice);
}

/**
 * Folds the transcript along a plan with the run's summariser and hooks; `forced` where the
 * endpoint already refused the request as too big. Answers whether the transcript changed. @internal
 */
export async function foldTranscript(
  run: LoopRun,
  plan: CompactionPlan,
  summarise: NonNullable<ReturnType<typeof summariserOf>>,
  forced: boolean,
): Promise<boolean> {
  const { settings, options } = run;
  const hooks = settings.hooks
    ? { run: settings.hooks.run, ...(settings.hooks.context ? { context: settings.hooks.context } : {}), onNote: run.onNotice }
    : undefined;
  const signal = options.signal;
  const folded = await compactTranscript(run.transcript, plan, summarise, {
    ...(hooks ? { hooks } : {}),
    ...(signal ? { signal } : {}),
    ...(forced ? { forced } : {}),
  });
  if (folded === run.transcript) return false;
  replaceTranscript(run, folded);
  return true;
}

/**
 * Folds the transcript where `compact: true` is set and the window is filling, with the
 * compaction task's summary; without a task it says so, once, and leaves the transcript. The
 * window is the one the server serves where that is known to be smaller than configured. @internal
 */
export async function compactIfNeeded(run: LoopRun, endpoint: LoopEndpoint): Promise<void> {
  const { settings, account } = run;
  if (!settings.compact) return;
  const limit = await sizingWindow(run);
  if (limit === undefined) return;
  // After a prompt the server cut, its count is the window's, not the prompt's: the messages are estimated instead.
  const used = run.served.countCut ? undefined : account.used;
  run.served.countCut = false;
  // planCompaction's documented name for the window is limit.
  const plan = planCompaction(run.transcript, {
    limit,
    ...(used !== undefined ? { used } : {}),
    charsPerToken: endpoint.charsPerToken(),
  });
  if (!plan) return;
  const summarise = summariserOf(run);
  if (!summarise) {
    if (!run.compactionWarned)
      run.onNotice("The window is filling, but compact: true has no compaction task to write the summary, so the transcript was not folded.");
    run.compactionWarned = true;
    return;
  }
  await foldTranscript(run, plan, summarise, false);
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
