/**
 * @module argument-validation
 * A call's arguments checked against its tool's JSON Schema before the tool runs, with Ajv
 * (draft 2020-12), and the issues written short enough for the model to correct itself.
 *
 * The schema checked is the one the host declared: where a tool came from sanitizeTools or
 * relaxTools, the original it was made from, never the rewrite a strict or grammar server was
 * sent. A strict server's nulls for optional properties are left out first, as dispatch is handed
 * them. A schema Ajv cannot compile (a draft-07 tuple, an unknown type) leaves that tool's calls
 * unchecked, said once per run as a notice. Compiled validators are kept in the runtime state, so
 * each schema is compiled once per runtime, not once per call.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { createHash } from "node:crypto";
import type { JsonSchema, ToolDefinition } from "../shapes/config.js";
import type { ToolCallRequest } from "../text/tool-calls.js";
import { isPlainRecord } from "../text/guards.js";
import { jsonKey } from "../text/safe-calls.js";
import { omitOptionalNulls } from "../text/schema-compat.js";
import { defineSlot, slotOf, type RuntimeState } from "../state/state.js";

/** The most issues one answer lists; the rest are counted. */
export const MAX_ARGUMENT_ISSUES = 10;

/** The key sanitizeTools and relaxTools keep a tool's original parameters under (a registered symbol, the same in every copy). */
const ORIGINAL_PARAMETERS = Symbol.for("@cubicecho/agent-core/schema-compat/original-parameters");

/** The key a tool whose arguments its own code checks is marked with. */
const ARGUMENTS_CHECKED = Symbol.for("@cubicecho/agent-core/arguments-checked");

/** The most compiled schemas a runtime keeps before it starts over. */
const MAX_COMPILED = 256;

/** One schema as the runtime keeps it: its validator, or why it could not be compiled. */
export type Compiled = { validate: ValidateFunction } | { problem: string };

interface ValidatorCache {
  ajv: Ajv2020 | undefined;
  compiled: Map<string, Compiled>;
}

/** The runtime's Ajv and the schemas compiled with it, keyed by a digest of each schema's JSON. */
const ARGUMENT_VALIDATORS = defineSlot<ValidatorCache>("argument-validators", () => ({ ajv: undefined, compiled: new Map() }));

/**
 * How a tool that checks its own arguments checks them: the issues with a call's arguments, one
 * a line as {@link invalidArgumentsText} lists them, or undefined where they match.
 */
export type OwnArgumentCheck = (args: unknown) => readonly string[] | undefined | Promise<readonly string[] | undefined>;

/**
 * Marks a tool whose arguments are checked by its own code (a zod schema, say), so the loop does
 * not check them against its JSON Schema a second time; returns the same tool.
 *
 * With `check`, the loop asks it in place of the JSON Schema check, before the call runs, and a
 * call it finds issues with is told and counted like any other (an `invalid-arguments` event) and
 * answered with the issues. The mark is a registered symbol, not enumerable, so it never reaches
 * a request body and two copies of the package read it alike. A frozen tool is copied, its own
 * properties kept, and the copy marked; anything that is not an object comes back as it is.
 *
 * @param tool - The tool definition to mark.
 * @param check - The tool's own check of a call's arguments; absent leaves them to the tool.
 */
export function markArgumentsChecked<T extends ToolDefinition>(tool: T, check?: OwnArgumentCheck | undefined): T {
  if (!tool || typeof tool !== "object") return tool;
  const target: T = Object.isExtensible(tool) ? tool : Object.create(Object.getPrototypeOf(tool), Object.getOwnPropertyDescriptors(tool));
  Object.defineProperty(target, ARGUMENTS_CHECKED, { value: typeof check === "function" ? check : true, enumerable: false });
  return target;
}

/** Tells whether a tool was marked by {@link markArgumentsChecked}, so its arguments are left to its own code. */
export function argumentsChecked(tool: ToolDefinition | undefined): boolean {
  try {
    const mark = tool !== undefined && tool !== null ? (tool as { [ARGUMENTS_CHECKED]?: unknown })[ARGUMENTS_CHECKED] : undefined;
    return mark === true || typeof mark === "function";
  } catch {
    return false;
  }
}

/** The check a tool marked by {@link markArgumentsChecked} brought with it, if any. @internal */
export function ownArgumentCheck(tool: ToolDefinition | undefined): OwnArgumentCheck | undefined {
  try {
    const mark = tool !== undefined && tool !== null ? (tool as { [ARGUMENTS_CHECKED]?: unknown })[ARGUMENTS_CHECKED] : undefined;
    return typeof mark === "function" ? (mark as OwnArgumentCheck) : undefined;
  } catch {
    return undefined;
  }
}

/** The parameters a tool was declared with: the original behind a sanitized or relaxed copy, else its own. */
export function declaredParameters(tool: ToolDefinition | undefined): JsonSchema | undefined {
  try {
    const original = (tool as { [ORIGINAL_PARAMETERS]?: unknown } | undefined)?.[ORIGINAL_PARAMETERS];
    if (original !== undefined && (typeof original === "boolean" || isPlainRecord(original))) return original as JsonSchema;
    return tool?.function?.parameters;
  } catch {
    return undefined;
  }
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

function createAjv(): Ajv2020 {
  // strict off: tool schemas in the wild carry keywords and formats Ajv does not know, which
  // are not what a call is checked for; addUsedSchema off: two tools may share an $id.
  return new Ajv2020({ allErrors: true, strict: false, logger: false, addUsedSchema: false });
}

/**
 * Compiles a schema once per runtime, keyed by its JSON, so the same schema in another object is
 * the same entry; the draft a root `$schema` names is not loaded, the schema is read as 2020-12.
 * @internal
 */
export function compileSchemaIn(state: RuntimeState, schema: JsonSchema): Compiled {
  const cache = slotOf(state, ARGUMENT_VALIDATORS);
  const key = digest(jsonKey(schema));
  const known = cache.compiled.get(key);
  if (known) return known;
  if (cache.compiled.size >= MAX_COMPILED) {
    cache.compiled.clear();
    cache.ajv = undefined;
  }
  cache.ajv ??= createAjv();
  let entry: Compiled;
  try {
    const root = isPlainRecord(schema) ? { ...schema } : schema;
    if (isPlainRecord(root)) delete root.$schema;
    entry = { validate: cache.ajv.compile(root as object) };
  } catch (error) {
    entry = { problem: error instanceof Error ? error.message : String(error) };
  }
  cache.compiled.set(key, entry);
  return entry;
}

function pathOf(instancePath: string, property?: string): string {
  const parts = instancePath
    .split("/")
    .slice(1)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (property !== undefined) parts.push(property);
  if (parts.length === 0) return "(the arguments)";
  return parts.map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : index === 0 ? part : `.${part}`)).join("");
}

function shown(value: unknown): string {
  const text = jsonKey(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** One Ajv error as a line the model can act on. */
function issueOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return `${pathOf(error.instancePath, String(params.missingProperty))}: is required`;
    case "additionalProperties":
      return `${pathOf(error.instancePath, String(params.additionalProperty))}: is not a parameter here`;
    case "type":
      return `${pathOf(error.instancePath)}: must be ${Array.isArray(params.type) ? params.type.join(" or ") : String(params.type)}`;
    case "enum":
      return `${pathOf(error.instancePath)}: must be one of ${Array.isArray(params.allowedValues) ? params.allowedValues.map(shown).join(", ") : "the allowed values"}`;
    case "const":
      return `${pathOf(error.instancePath)}: must be ${shown(params.allowedValue)}`;
    default:
      return `${pathOf(error.instancePath)}: ${error.message ?? `fails ${error.keyword}`}`;
  }
}

/** The issues as lines, each once, at most {@link MAX_ARGUMENT_ISSUES} and a count of the rest. */
function issuesOf(errors: readonly ErrorObject[]): string[] {
  const lines = [...new Set(errors.map(issueOf))];
  if (lines.length <= MAX_ARGUMENT_ISSUES) return lines;
  return [...lines.slice(0, MAX_ARGUMENT_ISSUES), `and ${lines.length - MAX_ARGUMENT_ISSUES} more`];
}

/**
 * What a call whose arguments do not match its tool's parameters is answered with: the issues,
 * one a line, and what to do about them.
 *
 * @param name - The tool's name.
 * @param issues - The issues, as {@link ArgumentChecker.check} lists them.
 */
export function invalidArgumentsText(name: string, issues: readonly string[]): string {
  return `The arguments for ${name} do not match its parameters, so it was not run:\n${issues.map((issue) => `- ${issue}`).join("\n")}\nCall it again with arguments that match its parameters.`;
}

/** One run's argument checks: the runtime's compiled schemas, and the tools it has already said it cannot check. */
export interface ArgumentChecker {
  /**
   * The issues with a call's arguments against its tool's declared schema; undefined where they
   * match, and where the tool is unknown, marked as checking its own, declares no schema, or has
   * one that cannot be compiled.
   */
  check(request: ToolCallRequest, tool: ToolDefinition | undefined): string[] | undefined;
}

/**
 * Makes one run's argument checker over a runtime state's compiled schemas; `onNotice` hears,
 * once per tool, that a schema could not be compiled. @internal
 */
export function createArgumentChecker(state: RuntimeState, onNotice: (text: string) => void): ArgumentChecker {
  const said = new Set<string>();
  // The run's own memo, so a schema object is read into its key once per run rather than once per call.
  const seen = new WeakMap<object, Compiled>();
  return {
    check(request, tool) {
      if (!tool || argumentsChecked(tool)) return undefined;
      const schema = declaredParameters(tool);
      if (schema === undefined || schema === true || (isPlainRecord(schema) && Object.keys(schema).length === 0)) return undefined;
      let compiled = isPlainRecord(schema) ? seen.get(schema) : undefined;
      if (!compiled) {
        compiled = compileSchemaIn(state, schema);
        if (isPlainRecord(schema)) seen.set(schema, compiled);
      }
      if ("problem" in compiled) {
        if (!said.has(request.name)) {
          said.add(request.name);
          onNotice(`The parameters schema of ${request.name} could not be compiled (${compiled.problem.slice(0, 200)}), so its arguments are not checked.`);
        }
        return undefined;
      }
      const args = omitOptionalNulls(request.args, isPlainRecord(schema) ? schema : undefined);
      try {
        if (compiled.validate(args)) return undefined;
        return issuesOf(compiled.validate.errors ?? []);
      } catch {
        return undefined;
      }
    },
  };
}
