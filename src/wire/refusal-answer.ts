/**
 * @module wire/refusal-answer
 * The shape of what answers a refusal: the latch flipped before a re-send, and the decision that
 * holds such answers, a clear stop or nothing to do. Every reader of refusal words
 * (wire/refusal, wire/refusal-combination, wire/reasoning-replay) answers in it, and negotiate
 * applies it.
 */

/** One latch a refusal is answered with. */
export interface Answer {
  /** A name for what is answered, for notices and errors. */
  what: string;
  /** The latch this answer flips, for the once-per-negotiation rule. */
  latch: string;
  /** True where the latch already reads as refused (so the callback ignored it). */
  already: boolean;
  /** The top-level field the request must have carried, where checkable. */
  field?: string | undefined;
  /** Flips the latch. */
  apply: () => void;
  /** The sentence the caller is told once the latch is flipped. */
  notice: string;
}

/** What to do about a failure: pass it on, flip latches and re-send, or give up clearly. */
export type Decision = { kind: "pass" } | { kind: "answer"; answers: Answer[] } | { kind: "stuck"; message: string; refused: string };
