/**
 * @module spec/read
 * Reads a JSON value as an agent document: the four refusals as errors, every other fault as a
 * warning and a dropped value, and the normalised document built either way.
 *
 * This file holds the document's sections and the tables of their fields; reading one field
 * against its table is spec/read-fields. Imports nothing at runtime but its sibling helpers and
 * the pure lists of shapes/, so the `./spec` entry stays loadable in a browser. The document's own
 * shape is fixed and shallow; the free-form values inside it (extraBody, a hook's arguments) are
 * copied without recursion.
 */
import { HOOK_EVENTS } from "../shapes/hooks.js";
import { DEFAULT_MAX_TOOL_ITERATIONS } from "../shapes/limits.js";
import { FieldReader, type Field } from "./read-fields.js";
import { isCredentialName, isPlainObject, joinPath, kindOf, ownValue, quoteShort, setOwn, type JsonObject, type JsonValue } from "./values.js";

export { DEFAULT_MAX_TOOL_ITERATIONS, HOOK_EVENTS };

/** The format name in a document's `spec` token. */
export const SPEC_FORMAT = "agent-core";
/** The major version this reader understands. */
export const SPEC_MAJOR = 1;
/** The features a host on this reader understands in `requires`, bundle aside. */
export const BASE_FEATURES: readonly string[] = ["prompt", "tools", "hooks", "tasks"];
/** What {@link readDocument} is told. */
export interface ReadOptions {
  bundle: boolean;
  features: readonly string[];
  /**
   * Build the warning sentences; a caller that throws them away (exportSpec) passes false, so a
   * document with a hundred thousand faults costs no sentences.
   * @default true
   */
  warnings?: boolean | undefined;
}

/** What {@link readDocument} found: the normalised document (absent only when it is not an object). */
export interface ReadResult {
  document?: JsonObject | undefined;
  errors: string[];
  warnings: string[];
}

const STRING: Field = { kind: "string" };
const ENDPOINT: Field = { kind: "endpoint" };
const TEMPERATURE: Field = { kind: "number", min: 0, max: 2 };
const COUNT: Field = { kind: "number", min: 0, integer: true };
const SECONDS: Field = { kind: "number", min: 0 };
const JSON_OBJECT: Field = { kind: "json" };

const MODEL_FIELDS: Record<string, Field> = {
  name: STRING,
  baseUrl: ENDPOINT,
  temperature: TEMPERATURE,
  maxTokens: COUNT,
  reasoningEffort: STRING,
  extraBody: JSON_OBJECT,
  contextLength: { kind: "number", min: 0, above: true, integer: true },
  requestTimeoutSeconds: SECONDS,
  firstTokenSeconds: SECONDS,
  maxRetries: COUNT,
  loadingTimeoutSeconds: SECONDS,
};

const TOOLS_FIELDS: Record<string, Field> = {
  discovery: { kind: "choice", values: ["eager", "ondemand", "proxy"] },
  maxIterations: COUNT,
  toolSelectModel: STRING,
};

const TASK_FIELDS: Record<string, Field> = {
  model: STRING,
  baseUrl: ENDPOINT,
  maxTokens: COUNT,
  temperature: TEMPERATURE,
  reasoningEffort: STRING,
  extraBody: JSON_OBJECT,
};

const PROMPT_FIELDS: Record<string, Field> = { id: STRING, text: STRING };

const HOOK_FIELDS: Record<string, Field> = {
  id: STRING,
  event: { kind: "choice", values: HOOK_EVENTS },
  server: STRING,
  tool: STRING,
  arguments: JSON_OBJECT,
  maxTokens: COUNT,
  timeoutSeconds: SECONDS,
  enabled: { kind: "boolean" },
};

const SERVER_FIELDS: Record<string, Field> = {
  name: STRING,
  type: { kind: "choice", values: ["stdio", "http", "sse"] },
  command: STRING,
  args: { kind: "strings" },
  env: { kind: "stringMap" },
  url: STRING,
  headers: { kind: "stringMap" },
};

const TOP_LEVEL: ReadonlySet<string> = new Set(["spec", "name", "description", "requires", "model", "prompt", "tools", "hooks", "tasks", "bundle"]);

/** Reads the document's own sections: the token, requires, tools, tasks and the bundle. */
class DocumentReader extends FieldReader {
  constructor(readonly options: ReadOptions) {
    super(options.warnings !== false);
  }

  token(value: unknown): string | undefined {
    if (value === null || value === undefined) {
      this.refuse("spec", `is missing; a document opens with "spec": "${SPEC_FORMAT}/${SPEC_MAJOR}"`);
      return undefined;
    }
    // Versions are whole numbers written without a leading zero, so "agent-core/01" names no major.
    const match = typeof value === "string" ? /^([a-z][a-z0-9-]*)\/(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?$/.exec(value) : null;
    if (!match || match[1] !== SPEC_FORMAT) {
      this.refuse(
        "spec",
        `${typeof value === "string" ? quoteShort(value) : kindOf(value)} is not a "${SPEC_FORMAT}/<major>" or "${SPEC_FORMAT}/<major>.<minor>" token (whole numbers without a leading zero, as in "${SPEC_FORMAT}/${SPEC_MAJOR}")`,
      );
      return undefined;
    }
    if (Number(match[2]) !== SPEC_MAJOR) {
      this.refuse("spec", `${quoteShort(value as string)} is major ${match[2]}; this host reads major ${SPEC_MAJOR}`);
      return undefined;
    }
    return value as string;
  }

  requires(value: unknown): string[] | undefined {
    const list = this.container(value, "requires", "array") as unknown[] | undefined;
    if (list === undefined) return undefined;
    const understood = new Set([...BASE_FEATURES, ...this.options.features, ...(this.options.bundle ? ["bundle"] : [])]);
    const out = new Set<string>();
    for (let index = 0; index < list.length; index += 1) {
      const feature: unknown = list[index];
      const path = joinPath("requires", index);
      if (typeof feature !== "string") this.refuse(path, `is ${kindOf(feature)}, not a feature name`);
      else if (!understood.has(feature)) {
        const hint = feature === "bundle" ? " (read it with { bundle: true } to accept its bundled servers)" : "";
        this.refuse(path, `${quoteShort(feature)} is a feature this host does not understand${hint}`);
      } else out.add(feature);
    }
    return [...out];
  }

  tools(value: unknown): JsonObject | undefined {
    const tools = this.container(value, "tools", "object") as Record<string, unknown> | undefined;
    if (tools === undefined) return undefined;
    const out = this.fields(tools, "tools", TOOLS_FIELDS, ["servers"]);
    const servers = this.container(ownValue(tools, "servers"), "tools.servers", "array") as unknown[] | undefined;
    if (servers !== undefined) {
      const names = new Set<string>();
      // One warning per repeated name, at its first repeat with how many more followed: a list
      // may repeat one name a hundred thousand times, and that is one problem, said once.
      const repeats = new Map<string, { first: number; more: number }>();
      for (let index = 0; index < servers.length; index += 1) {
        const name: unknown = servers[index];
        if (typeof name !== "string" || name === "") {
          this.wrongKind(joinPath("tools.servers", index), name, "a server name");
          continue;
        }
        // One lookup a name: the set grows unless the name was in it already.
        const before = names.size;
        names.add(name);
        if (names.size === before && this.collecting) {
          const seen = repeats.get(name);
          if (seen === undefined) repeats.set(name, { first: index, more: 0 });
          else seen.more += 1;
        }
      }
      for (const [name, { first, more }] of repeats) {
        const later = more === 0 ? "" : ` (and ${more} later entr${more === 1 ? "y" : "ies"})`;
        this.warnings.push(`tools.servers[${first}]: repeats ${quoteShort(name)}${later}; dropped`);
      }
      setOwn(out, "servers", [...names]);
    }
    return out;
  }

  tasks(value: unknown): JsonObject | undefined {
    const tasks = this.container(value, "tasks", "object") as Record<string, unknown> | undefined;
    if (tasks === undefined) return undefined;
    const out: JsonObject = {};
    for (const key of Object.keys(tasks)) {
      const path = joinPath("tasks", key);
      const task = tasks[key];
      if (task === null || task === undefined) continue;
      if (key === "") this.warn(path, "has an empty name; dropped");
      else if (!isPlainObject(task)) this.wrongKind(path, task, "an object");
      else setOwn(out, key, this.fields(task, path, TASK_FIELDS));
    }
    return out;
  }

  bundle(value: unknown): JsonObject | undefined {
    const bundle = this.container(value, "bundle", "object") as Record<string, unknown> | undefined;
    if (bundle === undefined) return undefined;
    if (!this.options.bundle) {
      this.warn("bundle", "is read only under { bundle: true }, since importing a server runs a program; dropped");
      return undefined;
    }
    const out: JsonObject = {};
    for (const key of Object.keys(bundle)) {
      if (key !== "mcpServers" && bundle[key] !== null && bundle[key] !== undefined) {
        this.warn(joinPath("bundle", key), "is not a field this format knows; dropped");
      }
    }
    const raw = ownValue(bundle, "mcpServers");
    if (raw === null || raw === undefined) return out;
    if (!Array.isArray(raw) && !isPlainObject(raw)) {
      this.refuse("bundle.mcpServers", `must be an array (or an object keyed by name), not ${kindOf(raw)}`);
      return out;
    }
    setOwn(
      out,
      "mcpServers",
      this.entries(raw, "bundle.mcpServers", "name", SERVER_FIELDS, (server, path) => {
        if (this.overlong.has(joinPath(path, "args"))) {
          this.warn(path, "cannot be run with the arguments it was given; dropped");
          return false;
        }
        if (typeof server.command === "string" || typeof server.url === "string") return true;
        this.warn(path, "has neither a command nor a url; dropped");
        return false;
      }),
    );
    return out;
  }
}

/** Reads a JSON value as an agent document, collecting every problem rather than stopping at one. */
export function readDocument(value: unknown, options: ReadOptions): ReadResult {
  const reader = new DocumentReader(options);
  if (!isPlainObject(value)) {
    return { errors: [`the document must be a JSON object, not ${kindOf(value)}`], warnings: [] };
  }
  const document: JsonObject = {};
  const token = reader.token(ownValue(value, "spec"));
  setOwn(document, "spec", token ?? `${SPEC_FORMAT}/${SPEC_MAJOR}`);
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL.has(key) && key !== "$schema" && value[key] !== null && value[key] !== undefined) {
      reader.warn(
        key,
        isCredentialName(key) ? "is named like a credential, and a document carries none; dropped" : "is not a field this format knows; dropped",
      );
    }
  }
  for (const key of ["name", "description"]) {
    const text = ownValue(value, key);
    if (text === null || text === undefined) continue;
    if (typeof text === "string") setOwn(document, key, text);
    else reader.wrongKind(key, text, "a string");
  }
  const parts: [string, JsonValue | undefined][] = [
    ["requires", reader.requires(ownValue(value, "requires"))],
    [
      "model",
      mapOrUndefined(reader.container(ownValue(value, "model"), "model", "object"), (model) =>
        reader.fields(model as Record<string, unknown>, "model", MODEL_FIELDS),
      ),
    ],
    [
      "prompt",
      mapOrUndefined(reader.container(ownValue(value, "prompt"), "prompt", "array"), (list) =>
        reader.entries(list as unknown[], "prompt", "id", PROMPT_FIELDS, (entry, path) => {
          if (typeof entry.text === "string") return true;
          reader.warn(path, "has no text; dropped");
          return false;
        }),
      ),
    ],
    ["tools", reader.tools(ownValue(value, "tools"))],
    [
      "hooks",
      mapOrUndefined(reader.container(ownValue(value, "hooks"), "hooks", "array"), (list) =>
        reader.entries(list as unknown[], "hooks", "id", HOOK_FIELDS, (hook, path) => {
          if (typeof hook.event === "string" || hook.enabled === false) return true;
          reader.warn(path, "names no event, so nothing would ever run it; dropped");
          return false;
        }),
      ),
    ],
    ["tasks", reader.tasks(ownValue(value, "tasks"))],
    ["bundle", reader.bundle(ownValue(value, "bundle"))],
  ];
  for (const [key, part] of parts) if (part !== undefined) setOwn(document, key, part);
  return { document, errors: reader.errors, warnings: reader.warnings };
}

function mapOrUndefined<T, R>(value: T | undefined, read: (value: T) => R): R | undefined {
  return value === undefined ? undefined : read(value);
}
