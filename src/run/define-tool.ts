/**
 * @module define-tool
 * Typed tools: {@link defineTool} pairs a tool's schema (zod 4 or JSON Schema) with the function
 * that runs it, and {@link toolset} turns a list of them into the `tools`, `catalog` and
 * `dispatch` runAgentLoop takes, so the three can never disagree.
 *
 * A zod schema is converted to the JSON Schema a request declares and is also what a call's
 * arguments are checked against before the function runs; arguments that do not match are
 * answered to the model with zod's issues, as the tool's failed result, and the function is not
 * called. A JSON Schema is declared as written and its arguments reach the function unchecked by
 * it. Inside runAgentLoop both kinds go through the loop's one argument check before the call
 * runs (zod's for a zod tool, the JSON Schema's otherwise): a mismatch is told as an
 * `invalid-arguments` event and counted in `metrics.invalidArguments` either way.
 */

import { safeParseAsync, toJSONSchema } from "zod/v4/core";
import type { JsonSchema, ToolDefinition } from "../shapes/config.js";
import type { ToolCallRequest } from "../text/tool-calls.js";
import { isPlainRecord } from "../text/guards.js";
import { isZodSchema } from "../turn/side-task-json.js";
import { invalidArgumentsText, markArgumentsChecked, MAX_ARGUMENT_ISSUES } from "./argument-validation.js";
import { TOOL_NAME_PATTERN, type DefinedTool, type ToolArguments, type ToolParameters, type ToolSpec } from "./define-tool-types.js";

export { toolset, ToolNotFound } from "./define-tool-set.js";
export type { Toolset, ToolsetEntry, ToolsetOptions, ToolNotFoundOptions } from "./define-tool-set.js";
export { TOOL_NAME_PATTERN } from "./define-tool-types.js";
export type { DefinedTool, ToolArguments, ToolContext, ToolExecute, ToolParameters, ToolSpec } from "./define-tool-types.js";

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.length > 40 ? `the string "${value.slice(0, 40)}…"` : `the string "${value}"`;
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

function isOlderZod(value: unknown): boolean {
  return isPlainRecord(value) && !("_zod" in value) && "_def" in value && typeof value.safeParse === "function";
}

/** The JSON Schema a tool declares: zod's input side, or the schema as written; always an object root. */
function declaredSchema(name: string, parameters: unknown): { [keyword: string]: unknown } {
  let schema: unknown;
  if (isZodSchema(parameters)) {
    try {
      // The model writes what the schema parses, so its input side is the one to describe.
      schema = toJSONSchema(parameters, { io: "input", unrepresentable: "any" });
    } catch (error) {
      throw new TypeError(
        `defineTool("${name}"): parameters could not be converted to JSON Schema (${error instanceof Error ? error.message : String(error)}).`,
        { cause: error },
      );
    }
    if (isPlainRecord(schema)) delete schema.$schema;
  } else if (isOlderZod(parameters)) {
    throw new TypeError(
      `defineTool("${name}"): parameters is a zod 3 schema; pass a zod 4 schema (import { z } from "zod", zod 4 or later) or a JSON Schema object.`,
    );
  } else if (isPlainRecord(parameters)) {
    schema = parameters;
  } else {
    throw new TypeError(`defineTool("${name}"): parameters must be a zod 4 object schema or a JSON Schema object, not ${describe(parameters)}.`);
  }
  const root = schema as { [keyword: string]: unknown };
  if (root.type !== undefined && root.type !== "object") {
    throw new TypeError(
      `defineTool("${name}"): parameters must describe an object (a tool's arguments are one JSON object), not type ${JSON.stringify(root.type)}.`,
    );
  }
  return root.type === undefined && root.properties !== undefined ? { type: "object", ...root } : root;
}

function issuePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(the arguments)";
  return path.map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join("");
}

/** Zod's issues as lines, at most {@link MAX_ARGUMENT_ISSUES} and a count of the rest, as the loop's JSON Schema check lists them. */
function issueLines(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string[] {
  const lines = issues.slice(0, MAX_ARGUMENT_ISSUES).map((issue) => `${issuePath(issue.path)}: ${issue.message}`);
  if (issues.length > MAX_ARGUMENT_ISSUES) lines.push(`and ${issues.length - MAX_ARGUMENT_ISSUES} more`);
  return lines;
}

/** The failed result a call whose arguments do not match a zod schema is answered with. */
function mismatch(name: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): { content: string; isError: true } {
  return { content: invalidArgumentsText(name, issueLines(issues)), isError: true };
}

/**
 * Defines a tool from its name, description, parameters and function, with arguments typed from a zod schema.
 *
 * `parameters` is a zod 4 object schema or a JSON Schema object. A zod schema is declared as its
 * input-side JSON Schema and checked before every call: the function is handed the schema's
 * parsed output (defaults and transforms applied), and arguments that do not match are answered
 * to the model as the tool's failed result, naming each issue, without calling the function. A
 * JSON Schema is declared as written and not checked here (runAgentLoop checks it). Throws a TypeError, naming the field, for a
 * name an OpenAI-compatible server would refuse ({@link TOOL_NAME_PATTERN}), parameters that are
 * neither (a zod 3 schema included) or do not describe an object, and an `execute` that is not a
 * function.
 *
 * @param spec - The name, the description, the parameters and `execute(args, { signal, call })`.
 * @example
 * ```ts
 * const weather = defineTool({
 *   name: "get_weather",
 *   description: "Today's weather in a city.",
 *   parameters: z.object({ city: z.string() }),
 *   execute: async ({ city }, { signal }) => fetchWeather(city, signal),
 * });
 * await runAgentLoop({ config, messages, ...toolset([weather]) });
 * ```
 */
export function defineTool<P extends ToolParameters>(spec: ToolSpec<P>): DefinedTool<P> {
  if (!isPlainRecord(spec)) throw new TypeError(`defineTool: expected { name, description, parameters, execute }, got ${describe(spec)}.`);
  const { name, description, parameters, execute } = spec;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `defineTool: name must be 1 to 64 letters, digits, "_" or "-" (what an OpenAI-compatible server accepts), not ${typeof name === "string" ? JSON.stringify(name) : describe(name)}.`,
    );
  }
  if (description !== undefined && typeof description !== "string")
    throw new TypeError(`defineTool("${name}"): description must be a string, not ${describe(description)}.`);
  if (typeof execute !== "function")
    throw new TypeError(`defineTool("${name}"): execute must be a function (args, { signal, call }) => result, not ${describe(execute)}.`);
  const schema = declaredSchema(name, parameters);
  const fn: ToolDefinition["function"] = { name, parameters: schema as JsonSchema };
  if (description) fn.description = description;
  const zod = isZodSchema(parameters) ? parameters : undefined;
  // A zod tool's arguments are checked against zod, not the JSON Schema made from it: by the loop,
  // which tells and counts a mismatch like any other, and again in run() for a dispatch of its own.
  const plain: ToolDefinition = { type: "function", function: fn };
  const definition = zod
    ? markArgumentsChecked(plain, async (args) => {
        const parsed = await safeParseAsync(zod, args);
        return parsed.success ? undefined : issueLines(parsed.error.issues);
      })
    : plain;
  return Object.freeze({
    name,
    definition,
    parameters,
    async run(call: ToolCallRequest, signal: AbortSignal): Promise<unknown> {
      let args: unknown = call.args;
      if (zod) {
        const parsed = await safeParseAsync(zod, call.args);
        if (!parsed.success) return mismatch(name, parsed.error.issues);
        args = parsed.data;
      }
      return execute(args as ToolArguments<P>, { signal, call });
    },
  });
}
