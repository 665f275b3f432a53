/**
 * @module tool-loading
 * Loading tools as a run asks for them, and reading back what a load wrote into a transcript.
 *
 * A proxied load answers with one line per newly loaded tool, each line the JSON object
 * `{"name":…,"description":…,"parameters":…}`; any other line of the result is plain text.
 * Since no request declares those tools, that result is the only copy of their schemas the
 * model has, which is what {@link holdsDefinitions} looks for.
 */

import type { Message, TextPart, ToolDefinition } from "./config.js";

/** One tool's definition as a proxied load writes it on a line of its result. */
export interface DefinitionLine {
  /** The tool's name. */
  name: string;
  /** What the tool does; absent where the tool declares nothing. */
  description?: string;
  /** The tool's parameters schema; always an object on the line. */
  parameters: Record<string, unknown>;
}

const EMPTY_PARAMETERS: Readonly<Record<string, unknown>> = Object.freeze({ type: "object", properties: Object.freeze({}) });

/**
 * Writes one tool as the line a proxied load result carries: its name, description and parameters as JSON.
 *
 * The keys are written in that order. A tool whose parameters are missing or a boolean schema
 * is written with an empty object schema, so every line is readable by {@link parseDefinitionLine}.
 */
export function formatDefinitionLine(tool: ToolDefinition | DefinitionLine): string {
  const source: { name?: unknown; description?: unknown; parameters?: unknown } =
    "function" in tool && tool.function && typeof tool.function === "object" ? tool.function : (tool as DefinitionLine);
  const parameters =
    source.parameters && typeof source.parameters === "object" && !Array.isArray(source.parameters)
      ? (source.parameters as Record<string, unknown>)
      : EMPTY_PARAMETERS;
  const line: DefinitionLine = { name: String(source.name ?? "") } as DefinitionLine;
  if (typeof source.description === "string") line.description = source.description;
  line.parameters = parameters;
  return JSON.stringify(line);
}

/**
 * Reads one line of a load result as a tool definition, or returns undefined for a line of plain text.
 *
 * A definition line is a JSON object with a string `name` and an object `parameters`.
 */
export function parseDefinitionLine(line: string): DefinitionLine | undefined {
  if (typeof line !== "string") return undefined;
  const text = line.trim();
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const candidate = value as { name?: unknown; description?: unknown; parameters?: unknown };
  if (typeof candidate.name !== "string") return undefined;
  if (!candidate.parameters || typeof candidate.parameters !== "object" || Array.isArray(candidate.parameters)) return undefined;
  const result: DefinitionLine = { name: candidate.name, parameters: candidate.parameters as Record<string, unknown> };
  if (typeof candidate.description === "string") result.description = candidate.description;
  return result;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content as TextPart[]) {
    if (part && part.type === "text" && typeof part.text === "string") text += part.text;
  }
  return text;
}

/**
 * Tells whether a message is a tool result that carries tool definitions, as a proxied load writes them.
 *
 * True for a `tool` message at least one line of whose content reads as a definition line
 * (see {@link parseDefinitionLine}); false for anything else, never throwing. A prune of a
 * host's own should keep such a result, since it holds the only copy of those schemas.
 */
export function holdsDefinitions(message: Message): boolean {
  if (!message || typeof message !== "object" || message.role !== "tool") return false;
  const text = contentText(message.content);
  if (!text.includes("{")) return false;
  for (const line of text.split("\n")) {
    if (parseDefinitionLine(line)) return true;
  }
  return false;
}
