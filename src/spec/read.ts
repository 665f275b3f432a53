/**
 * @module spec/read
 * Reads a JSON value as an agent document: the four refusals as errors, every other fault as a
 * warning and a dropped value, and the normalised document built either way.
 *
 * Imports nothing at runtime but its sibling helpers and the pure lists of shapes/, so the `./spec`
 * entry stays loadable in a browser. The document's own shape is fixed and shallow; the free-form values inside it
 * (extraBody, a hook's arguments) are copied without recursion.
 */
import { HOOK_EVENTS } from "../shapes/hooks.js";
import { DEFAULT_MAX_TOOL_ITERATIONS } from "../shapes/limits.js";
import { urlSign } from "./secrets.js";
import { copyJsonValue, isCredentialName, isPlainObject, joinPath, kindOf, ownValue, quoteShort, setOwn, type JsonObject, type JsonValue } from "./values.js";

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

type Field =
  | { kind: "string" }
  | { kind: "endpoint" }
  | { kind: "number"; min: number; max?: number; integer?: boolean; above?: boolean }
  | { kind: "choice"; values: readonly string[] }
  | { kind: "boolean" }
  | { kind: "json" }
  | { kind: "strings" }
  | { kind: "stringMap" };

/**
 * The most entries a bundled server's `args` may hold; past it the list can only be garbage (a
 * real command line holds tens), and the server is dropped rather than run with other arguments.
 */
export const MAX_SERVER_ARGS = 4096;

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

class Reader {
  readonly errors: string[] = [];
  readonly warnings: string[] = [];
  /** The paths of string lists refused whole for their length, so their owner can be dropped. */
  readonly overlong = new Set<string>();

  /** Whether warning sentences are built at all. */
  readonly collecting: boolean;

  constructor(readonly options: ReadOptions) {
    this.collecting = options.warnings !== false;
    if (!this.collecting) this.warn = () => {};
  }

  warn = (path: string, message: string): void => {
    this.warnings.push(`${path}: ${message}`);
  };

  refuse(path: string, message: string): void {
    this.errors.push(`${path}: ${message}`);
  }

  /** A container the format's structure hangs on: null is absent, the wrong kind is a refusal. */
  container(value: unknown, path: string, kind: "object" | "array"): Record<string, unknown> | unknown[] | undefined {
    if (value === null || value === undefined) return undefined;
    if (kind === "array" ? Array.isArray(value) : isPlainObject(value)) return value as Record<string, unknown>;
    this.refuse(path, `must be ${kind === "array" ? "an array" : "an object"}, not ${kindOf(value)}`);
    return undefined;
  }

  /** Reads one object's fields against a table; unknown and credential-named keys are dropped. */
  fields(source: Record<string, unknown>, path: string, table: Record<string, Field>, skip: readonly string[] = []): JsonObject {
    const out: JsonObject = {};
    for (const key of Object.keys(source)) {
      if (skip.includes(key)) continue;
      const fieldPath = joinPath(path, key);
      const value = source[key];
      if (value === null || value === undefined) continue;
      const field = Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
      if (field === undefined) {
        this.warn(
          fieldPath,
          isCredentialName(key) ? "is named like a credential, and a document carries none; dropped" : "is not a field this format knows; dropped",
        );
        continue;
      }
      const read = this.field(value, fieldPath, field);
      if (read !== undefined) setOwn(out, key, read);
    }
    return out;
  }

  field(value: unknown, path: string, field: Field): JsonValue | undefined {
    switch (field.kind) {
      case "string":
      case "endpoint":
        if (typeof value !== "string") return this.wrongKind(path, value, "a string");
        if (field.kind === "endpoint" && urlSign(value) !== undefined) {
          this.warn(path, "carries a credential in its URL, and a document carries none; dropped");
          return undefined;
        }
        return value;
      case "number":
        return this.number(value, path, field);
      case "choice":
        if (typeof value === "string" && field.values.includes(value)) return value;
        this.warn(path, `${typeof value === "string" ? quoteShort(value) : kindOf(value)} is not one of ${field.values.join(", ")}; dropped`);
        return undefined;
      case "boolean":
        return typeof value === "boolean" ? value : this.wrongKind(path, value, "true or false");
      case "json":
        if (!isPlainObject(value)) return this.wrongKind(path, value, "an object");
        return copyJsonValue(value, { dropCredentials: true, path, warn: this.warn });
      case "strings":
        return this.strings(value, path);
      case "stringMap":
        return this.stringMap(value, path);
    }
  }

  wrongKind(path: string, value: unknown, wanted: string): undefined {
    this.warn(path, `must be ${wanted}, not ${kindOf(value)}; dropped`);
    return undefined;
  }

  number(value: unknown, path: string, field: Extract<Field, { kind: "number" }>): number | undefined {
    if (typeof value !== "number" || !Number.isFinite(value)) return this.wrongKind(path, value, "a finite number");
    const tooLow = field.above ? value <= field.min : value < field.min;
    const tooHigh = value > (field.max ?? Number.MAX_SAFE_INTEGER);
    if (tooLow || tooHigh || (field.integer && !Number.isInteger(value))) {
      this.warn(path, `${value} is out of range (${describeRange(field)}); dropped, not clamped`);
      return undefined;
    }
    return value;
  }

  strings(value: unknown, path: string): string[] | undefined {
    if (!Array.isArray(value)) return this.wrongKind(path, value, "an array of strings");
    // Refused by its length before any scan or copy.
    if (value.length > MAX_SERVER_ARGS) {
      this.overlong.add(path);
      this.warn(path, `holds ${value.length} entries, more than the ${MAX_SERVER_ARGS} a server's args may; dropped`);
      return undefined;
    }
    // All strings, as a server's args are: one copy of the whole.
    if (value.every((item: unknown) => typeof item === "string")) return value.slice() as string[];
    const out: string[] = [];
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      if (typeof item === "string") out.push(item);
      else this.wrongKind(joinPath(path, index), item, "a string");
    }
    return out;
  }

  stringMap(value: unknown, path: string): JsonObject | undefined {
    if (!isPlainObject(value)) return this.wrongKind(path, value, "an object of strings");
    const out: JsonObject = {};
    for (const key of Object.keys(value)) {
      const item = value[key];
      if (item === null || item === undefined) continue;
      if (typeof item === "string") setOwn(out, key, item);
      else this.wrongKind(joinPath(path, key), item, "a string");
    }
    return out;
  }

  /** Reads entries merged by a key field (`id`, `name`): the same key again replaces in place. */
  entries(
    list: unknown[] | Record<string, unknown>,
    path: string,
    keyField: string,
    table: Record<string, Field>,
    check?: (entry: JsonObject, entryPath: string) => boolean,
  ): JsonObject[] {
    const out: JsonObject[] = [];
    const position = new Map<string, number>();
    const keyed = !Array.isArray(list);
    const keys = keyed ? Object.keys(list) : [];
    const count = keyed ? keys.length : list.length;
    for (let index = 0; index < count; index += 1) {
      const raw: unknown = keyed ? list[keys[index] as string] : list[index];
      const entryPath = keyed ? joinPath(path, keys[index] as string) : joinPath(path, index);
      if (raw === null || raw === undefined) continue;
      if (!isPlainObject(raw)) {
        this.wrongKind(entryPath, raw, "an object");
        continue;
      }
      const stated = this.fields(raw, entryPath, table, keyed ? [keyField] : []);
      const entry: JsonObject = keyed ? { ...named(keyField, keys[index] as string), ...stated } : stated;
      const key = ownValue(entry, keyField);
      if (typeof key !== "string" || key === "") {
        this.warn(entryPath, `has no ${keyField}, and an entry is merged by it; dropped`);
        continue;
      }
      if (check && !check(entry, entryPath)) continue;
      const earlier = position.get(key);
      if (earlier !== undefined) {
        this.warn(entryPath, `repeats the ${keyField} ${quoteShort(key)}; the later entry replaces the earlier`);
        out[earlier] = entry;
      } else {
        position.set(key, out.length);
        out.push(entry);
      }
    }
    return out;
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
  const reader = new Reader(options);
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

function describeRange(field: Extract<Field, { kind: "number" }>): string {
  const whole = field.integer ? "a whole number " : "";
  if (field.max !== undefined) return `${whole}from ${field.min} to ${field.max}`;
  return field.above ? `${whole}above ${field.min}` : `${whole}${field.min} or more`;
}

function named(keyField: string, key: string): JsonObject {
  const entry: JsonObject = {};
  setOwn(entry, keyField, key);
  return entry;
}

function mapOrUndefined<T, R>(value: T | undefined, read: (value: T) => R): R | undefined {
  return value === undefined ? undefined : read(value);
}
