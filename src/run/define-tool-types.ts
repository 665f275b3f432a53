/**
 * @module run/define-tool-types
 * The shapes of a typed tool: what defineTool takes and makes, and the arguments and context its
 * function is handed.
 */

import type { $ZodType, output } from "zod/v4/core";
import type { ToolDefinition } from "../shapes/config.js";
import type { ToolCallRequest } from "../text/tool-calls.js";

export { TOOL_NAME_PATTERN } from "../shapes/limits.js";

/** A tool's parameters: a zod 4 schema (classic or mini) of an object, or a JSON Schema object. */
export type ToolParameters = $ZodType | { [keyword: string]: unknown };

/** The arguments a tool's function is handed: the zod schema's output, or a plain object for a JSON Schema. */
export type ToolArguments<P> = P extends $ZodType ? output<P> : Record<string, unknown>;

/** What a tool's function is handed beside its arguments. */
export interface ToolContext {
  /** Aborts when the run stops; pass it on to anything the tool waits for. */
  signal: AbortSignal;
  /** The call as the loop read it: its id, the tool's name, the repaired arguments and the model's own text. */
  call: ToolCallRequest;
}

/** The function that runs a tool; what it returns or throws is what the model reads (see Dispatch). */
export type ToolExecute<P> = (args: ToolArguments<P>, context: ToolContext) => unknown;

/** What {@link defineTool} takes: a tool's name, what it does, its parameters and its function. */
export interface ToolSpec<P extends ToolParameters> {
  /** The name the model calls it by: letters, digits, `_` and `-`, at most 64. */
  name: string;
  /** What the tool does, as the model reads it; the first line is the catalogue's one line. */
  description?: string | undefined;
  /** The arguments it takes: a zod 4 object schema (checked before each call) or a JSON Schema object (not checked). */
  parameters: P;
  /** Runs one call. */
  execute: ToolExecute<P>;
}

/** A tool made by {@link defineTool}: its declaration and the function behind it, checked arguments first. */
export interface DefinedTool<P extends ToolParameters = ToolParameters> {
  /** The tool's name. */
  readonly name: string;
  /** The tool as a request declares it. */
  readonly definition: ToolDefinition;
  /** The schema it was defined with. */
  readonly parameters: P;
  /**
   * Runs one call: the arguments checked against a zod schema, then the function.
   *
   * Arguments that do not match come back as a failed result (`{ content, isError: true }`)
   * naming each issue, and the function is not called; what the function returns is returned and
   * what it throws is thrown, as a dispatch would.
   */
  run(call: ToolCallRequest, signal: AbortSignal): Promise<unknown>;
}
