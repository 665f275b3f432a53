/**
 * @module run/preselect-prompt
 * The model's side of a preselection: the prompt that shows it the catalogue, the schema of its
 * answer, and the reading of that answer back into catalogued names.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import type { JsonSchema } from "../shapes/config.js";
import { findJson, parseLooseJson } from "../text/json-repair.js";
import { positiveInteger } from "../text/guards.js";

/** The most tools a preselection returns unless a cap is given. */
export const DEFAULT_CAP = 12;

/** The longest description a preselection prompt shows for one tool, in characters. */
const DESCRIPTION_CHARACTERS = 240;

/** The answer a preselection asks the model for: `{ tools: string[] }`, as a JSON schema for askJson. */
export const PRESELECT_SCHEMA: JsonSchema = deepFreeze({
  type: "object",
  properties: {
    tools: {
      type: "array",
      items: { type: "string" },
      description: "Names of the catalogued tools the request needs, most useful first; empty when it needs none.",
    },
  },
  required: ["tools"],
  additionalProperties: false,
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The cap a preselection holds to: a whole number of at least one, or the default. */
export function capOf(cap: unknown): number {
  return positiveInteger(cap) ?? DEFAULT_CAP;
}

/** The catalogue's servers, or none where it is not an array. */
export function serversOf(catalog: unknown): CatalogServer[] {
  return Array.isArray(catalog) ? (catalog as CatalogServer[]) : [];
}

function oneLine(text: unknown): string {
  if (typeof text !== "string") return "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > DESCRIPTION_CHARACTERS ? `${line.slice(0, DESCRIPTION_CHARACTERS - 1).trimEnd()}…` : line;
}

function catalogLines(catalog: readonly CatalogServer[]): string[] {
  const lines: string[] = [];
  for (const server of serversOf(catalog)) {
    if (!server || typeof server !== "object" || !Array.isArray(server.tools)) continue;
    const tools = server.tools.filter((tool) => tool && typeof tool === "object" && typeof tool.name === "string" && tool.name !== "");
    if (tools.length === 0) continue;
    const name = typeof server.name === "string" ? server.name : "";
    const label = typeof server.label === "string" && server.label.trim() && server.label.trim() !== name ? oneLine(server.label) : "";
    const heading = label ? `${label} (${name})` : name;
    if (heading) lines.push(`## ${heading}`);
    for (const tool of tools) {
      const description = oneLine(tool.description);
      lines.push(description ? `- ${tool.name}: ${description}` : `- ${tool.name}`);
    }
  }
  return lines;
}

/** How many well-formed tools a catalogue lists. */
export function toolCount(catalog: readonly CatalogServer[]): number {
  let count = 0;
  for (const server of serversOf(catalog)) {
    if (server && typeof server === "object" && Array.isArray(server.tools)) {
      count += server.tools.filter((tool) => tool && typeof tool === "object" && typeof tool.name === "string" && tool.name !== "").length;
    }
  }
  return count;
}

/**
 * Writes the system prompt for a small model choosing a request's tools from a catalogue.
 *
 * The prompt holds the instructions and the whole catalogue, a heading per server and one line
 * per tool (its name and its description on one line, cut at 240 characters), so it stays the
 * same from request to request and a server's prompt cache can keep it.
 *
 * @param catalog - The connected servers and their tools.
 * @param cap - The most tools the model may name.
 * @default cap 12
 */
export function preselectSystem(catalog: readonly CatalogServer[], cap: number = DEFAULT_CAP): string {
  const limit = capOf(cap);
  const lines = catalogLines(catalog);
  return [
    "You pick the tools an assistant will need before it starts on a request.",
    "The catalogue below lists every tool it can use, grouped by server, one tool a line: its exact name, then what it does.",
    `Read the request and name the tools the assistant will have to call to carry it out, the most useful first, at most ${limit}.`,
    "Copy each name exactly as the catalogue writes it and never invent one. Name no tools when the request can be answered without any.",
    'Answer with JSON alone, in the form {"tools": ["name", ...]}.',
    "",
    "Catalogue:",
    ...(lines.length > 0 ? lines : ["(no tools)"]),
  ].join("\n");
}

/**
 * Writes the user turn for a small model choosing a request's tools: the request and a reminder of the answer's form.
 *
 * The reminder states the cap, lowered to the number of tools the catalogue holds.
 *
 * @param catalog - The connected servers and their tools.
 * @param request - The request the tools are for.
 * @param cap - The most tools the model may name.
 * @default cap 12
 */
export function preselectInput(catalog: readonly CatalogServer[], request: string, cap: number = DEFAULT_CAP): string {
  const limit = Math.min(capOf(cap), toolCount(catalog));
  const text = typeof request === "string" ? request.trim() : "";
  return [
    "Request:",
    text || "(empty)",
    "",
    `Answer with {"tools": [...]}: at most ${limit} names from the catalogue, or an empty list when none is needed.`,
  ].join("\n");
}

/** The list of names in a reply: its `tools`, the bare array, either as JSON text; undefined for any other shape. */
export function namesIn(reply: unknown): unknown[] | undefined {
  let value = reply;
  if (typeof value === "string") {
    const found = findJson(value);
    if (found === undefined) return undefined;
    const parsed = parseLooseJson(found);
    if (!parsed.ok) return undefined;
    value = parsed.value;
  }
  if (Array.isArray(value)) return value;
  if (value && typeof value === "object") {
    const tools = (value as { tools?: unknown }).tools;
    if (Array.isArray(tools)) return tools;
    if (typeof tools === "string") return [tools];
  }
  return undefined;
}

/**
 * Reads the tools a model chose out of its reply, keeping only catalogued names, each once, up to the cap.
 *
 * Takes the object `{ tools: [...] }` that {@link PRESELECT_SCHEMA} asks for, the bare array an
 * older prompt produced, or either as JSON text (in prose or a fence, repaired where a model
 * nearly wrote JSON). An entry may be a name or an object with a `name`. A name is matched
 * exactly first, then ignoring case where that picks one tool. Anything else gives an empty
 * list; it never throws.
 *
 * @param reply - The model's answer, parsed or as text.
 * @param catalog - The connected servers and their tools.
 * @param cap - The most tools to keep.
 * @default cap 12
 */
export function preselection(reply: unknown, catalog: readonly CatalogServer[], cap: number = DEFAULT_CAP): string[] {
  const limit = capOf(cap);
  let entries: unknown[] | undefined;
  try {
    entries = namesIn(reply);
  } catch {
    entries = undefined;
  }
  if (!entries || entries.length === 0) return [];
  const exact = new Set<string>();
  const folded = new Map<string, string | null>();
  for (const server of serversOf(catalog)) {
    if (!server || typeof server !== "object" || !Array.isArray(server.tools)) continue;
    for (const tool of server.tools) {
      if (!tool || typeof tool !== "object" || typeof tool.name !== "string" || tool.name === "") continue;
      exact.add(tool.name);
      const key = tool.name.toLowerCase();
      const known = folded.get(key);
      folded.set(key, known === undefined || known === tool.name ? tool.name : null);
    }
  }
  const chosen: string[] = [];
  for (const entry of entries) {
    if (chosen.length >= limit) break;
    const raw = typeof entry === "string" ? entry : entry && typeof entry === "object" ? (entry as { name?: unknown }).name : undefined;
    if (typeof raw !== "string") continue;
    const name = raw.trim();
    const match = exact.has(name) ? name : (folded.get(name.toLowerCase()) ?? undefined);
    if (match && !chosen.includes(match)) chosen.push(match);
  }
  return chosen;
}
