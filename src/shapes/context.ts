/**
 * @module shapes/context
 * The four-way cut of a request that token counting hands back and usage events carry.
 */

/** A request cut four ways: the numbers {@link contextTokens} and {@link contextChars} hand back. */
export interface ContextBreakdown {
  /** System and developer messages: what a shorter prompt saves. */
  system: number;
  /** The declared tool schemas: what loading tools on demand saves. */
  tools: number;
  /** Every other message, the arguments of assistant tool calls included: what compaction folds. */
  history: number;
  /** The tool messages and nothing else: what pruning tool results shrinks. */
  toolResults: number;
  /** The four parts added together. */
  total: number;
}
