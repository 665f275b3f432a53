/**
 * @module shapes/limits
 * The limits a run's input is held to, shared by the agent document, the wire and the loop: the
 * default tool-step limit and the names an OpenAI-compatible server takes for a tool.
 */

/** The tool-step limit a run and a resolved agent document get when none is stated. */
export const DEFAULT_MAX_TOOL_ITERATIONS = 20;

/** What a tool name must be for an OpenAI-compatible server to take it: letters, digits, `_` and `-`, 1 to 64 of them. */
export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;
