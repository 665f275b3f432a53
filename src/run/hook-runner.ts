/**
 * @module run/hook-runner
 * The hook shapes, and the one place a caller's hook runner is called: whatever it throws,
 * rejects with or answers becomes outcomes and notes, and a signal ends the wait.
 *
 * `hooks` re-exports the public names here.
 */

import { HOOK_EVENTS, type HookEventName } from "../shapes/hooks.js";
import { errorMessage } from "../text/errors.js";

export { HOOK_EVENTS, type HookEventName };

/** The events whose hooks can add context to a request; the others can only read what happened. */
export const INJECTING: ReadonlySet<string> = new Set(["sessionStart", "beforeTurn"]);

/** What one hook did, as a runner reports it. */
export interface HookOutcome {
  /** The hook's name, used as the source of its context block and in notes. */
  hook: string;
  /** Whether the hook ran and worked. */
  ok: boolean;
  /** Text for the model; only read on `sessionStart` and `beforeTurn`. */
  context?: string | undefined;
  /** The most of `context` this hook may add, in estimated tokens, inside the shared budget. */
  maxTokens?: number | undefined;
  /** Asks that what the event announces not happen; read by `consult` only, and never on a failed outcome. */
  veto?: boolean | undefined;
  /** A sentence from the hook for whoever is watching. */
  note?: string | undefined;
  /** Why it failed. */
  error?: string | undefined;
}

/**
 * Runs every hook a host has for one event and reports each one's outcome.
 *
 * The caller's to write; it should resolve rather than reject, but nothing here depends on it.
 */
export type HookRunner = (event: HookEventName, payload: Record<string, unknown>, options?: { signal?: AbortSignal }) => Promise<HookOutcome[]>;

/** Whether a value is a number above zero (Infinity included). */
export const positive = (value: unknown): value is number => typeof value === "number" && value > 0;
/** Whether a value is a non-null object. */
export const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object";
/** How a note names a hook. */
export const named = (hook: string) => (hook ? `Hook "${hook}"` : "A hook");

/** A runner's answer made safe: well-formed outcomes, plus sentences about whatever was not. */
export interface RunnerAnswer {
  outcomes: HookOutcome[];
  notes: string[];
  /** The one outcome standing for a runner that threw or answered with something else; already noted. */
  failure?: HookOutcome | undefined;
}

/** Reads one item of a runner's answer as an outcome, or undefined where it is not an object. */
function readOutcome(item: unknown): HookOutcome | undefined {
  if (!isObject(item)) return undefined;
  // An outcome in the older pool shape names the hook `label` and carries its context as `text`.
  const hook = typeof item.hook === "string" ? item.hook : typeof item.label === "string" ? item.label : "";
  const context = typeof item.context === "string" ? item.context : item.inject === true && typeof item.text === "string" ? item.text : undefined;
  const outcome: HookOutcome = { ...item, hook, ok: item.ok === true };
  delete outcome.context;
  delete outcome.maxTokens;
  delete outcome.veto;
  delete outcome.note;
  delete outcome.error;
  if (context !== undefined) outcome.context = context;
  if (positive(item.maxTokens)) outcome.maxTokens = item.maxTokens;
  if (item.veto === true) outcome.veto = true;
  if (typeof item.note === "string") outcome.note = item.note;
  if (typeof item.error === "string") outcome.error = item.error;
  else if (typeof item.ok !== "boolean") outcome.error = "the outcome did not say whether the hook worked";
  return outcome;
}

const STOPPED = Symbol("stopped");

/** Calls a runner for one event so that nothing it does can throw, reject or outlast the signal. */
export async function runSafely(run: HookRunner, event: string, payload: unknown, signal?: AbortSignal): Promise<RunnerAnswer> {
  const failed = (error: string, note: string): RunnerAnswer => {
    const failure: HookOutcome = { hook: "", ok: false, error };
    return { outcomes: [failure], notes: [note], failure };
  };
  if (!HOOK_EVENTS.includes(event as HookEventName)) return { outcomes: [], notes: [`"${String(event)}" is not a hook event; no hook was run.`] };
  if (typeof run !== "function") return { outcomes: [], notes: [`No hook runner was given, so no ${event} hook ran.`] };
  if (signal?.aborted) return { outcomes: [], notes: [`The ${event} hooks were not run: the request was stopped first.`] };
  let onAbort: (() => void) | undefined;
  let result: { value: unknown } | { error: unknown } | typeof STOPPED;
  try {
    const pending = run(event as HookEventName, isObject(payload) ? payload : {}, signal ? { signal } : {});
    const settled = Promise.resolve(pending).then(
      (value: unknown) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const stopped = new Promise<typeof STOPPED>((resolve) => {
      onAbort = () => resolve(STOPPED);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    result = await Promise.race([settled, stopped]);
  } catch (error) {
    result = { error };
  } finally {
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
  if (result === STOPPED) return { outcomes: [], notes: [`The ${event} hooks were stopped before they answered.`] };
  if ("error" in result) {
    const message = errorMessage(result.error);
    return failed(message, `The ${event} hooks could not run: ${message}`);
  }
  const answer = result.value;
  if (!Array.isArray(answer)) {
    const what = answer === null ? "null" : typeof answer;
    return failed(`the runner returned ${what}, not a list of outcomes`, `The ${event} hook runner returned ${what} instead of a list of outcomes.`);
  }
  const outcomes: HookOutcome[] = [];
  let skipped = 0;
  for (const item of answer) {
    const outcome = readOutcome(item);
    if (outcome === undefined) skipped++;
    else outcomes.push(outcome);
  }
  const notes = skipped > 0 ? [`${skipped} of the ${event} hook runner's outcomes were not objects and were ignored.`] : [];
  return { outcomes, notes };
}

/** Failure and self-reported notes for outcomes whose context is not being assembled. */
export function outcomeNotes(outcomes: readonly HookOutcome[], event: string): string[] {
  const notes: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.note) notes.push(`${named(outcome.hook)}: ${outcome.note}`);
    if (!outcome.ok) notes.push(`${named(outcome.hook)} failed on ${event}: ${outcome.error ?? "no reason given"}.`);
  }
  return notes;
}
