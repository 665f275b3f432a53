/**
 * @module preselect
 * Choosing a run's tools before it starts: by the request's own words, by a small model, or by
 * the words first and the model only where the words cannot settle it.
 *
 * {@link preselectByKeywords} ranks the catalogue against the request with BM25F over each
 * tool's name, its server's label and its one-line description, and says whether the ranking is
 * `confident`. {@link preselect} returns that shortlist when it is (given `keywords`), and asks a
 * small model through a structured side task otherwise. {@link preselectSystem},
 * {@link preselectInput}, {@link preselection} and {@link PRESELECT_SCHEMA} are the prompt, the
 * answer's shape and the reading of the reply, for a host that makes the call itself.
 *
 * Given a usage memory (see run/usage-memory), the ranking also reads the words of past requests
 * that used each tool, and the verdict holds to thresholds chosen for a memory's scores; an empty
 * memory changes nothing.
 *
 * The keyword index of a catalogue is built once and kept in the runtime state, keyed by the
 * catalogue array; a catalogue whose servers or tool lists were replaced or grew or shrank since
 * is indexed again. A catalogue edited in place (a description rewritten inside the same tool
 * object) is not noticed: pass a new array for that.
 */

import type { CatalogServer } from "../shapes/catalog.js";
import type { Endpoint, JsonSchema } from "../shapes/config.js";
import { indexTools, scoreTools, topTools, type KeywordIndex } from "./keyword-index.js";
import { capOf, namesIn, preselectInput, preselectSystem, preselection, PRESELECT_SCHEMA, serversOf, toolCount } from "./preselect-prompt.js";
import { defaultState, defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import { isUsageMemory, type UsageMemory } from "./usage-memory.js";
import { scoreWithMemory } from "./usage-memory-score.js";
import { askJsonIn, type SideTaskOptions } from "../turn/side-task.js";
import { notify } from "../text/safe-calls.js";
import { nonNegativeNumber } from "../text/guards.js";

export { PRESELECT_SCHEMA, preselectInput, preselectSystem, preselection } from "./preselect-prompt.js";

/** The lead of the notice that names a run's preselected tools; the names follow, comma-separated. */
export const PRESELECTED_NOTICE = "Preselected tools:";

/** The reply ceiling a preselection asks for unless told otherwise, in tokens. */
const DEFAULT_MAX_TOKENS = 256;

/**
 * The lowest score the top tool must earn from its own words for {@link preselectByKeywords} to
 * call the ranking confident, in units of one word found in a single tool of the catalogue.
 */
export const KEYWORD_MIN_SCORE = 1.4;

/**
 * The most the best tool the cap left out may score from its own words, as a share of the top
 * tool's, for {@link preselectByKeywords} to call the ranking confident.
 */
export const KEYWORD_DROPOFF = 0.3;

/**
 * The lowest score the top tool must earn, its usage memory's share included, for
 * {@link preselectByKeywords} to call a ranking made with a memory that holds anything confident.
 *
 * A memory lifts the scores of the tools past requests used, so the bar is its own, chosen by
 * cross-validation on MetaTool's no-tool and tool-needing queries (bench/preselect.bench.ts).
 */
export const KEYWORD_MEMORY_MIN_SCORE = 1.7;

/**
 * The most the best tool the cap left out may score, as a share of the top tool's, for
 * {@link preselectByKeywords} to call a ranking made with a memory that holds anything confident.
 */
export const KEYWORD_MEMORY_DROPOFF = 0.4;

/** Where keyword preselection draws its line; each absent field takes its default. */
export interface KeywordThresholds {
  /**
   * The lowest score the top tool must earn from its own words, in units of one word found in a single tool.
   * @default 1.4 (KEYWORD_MIN_SCORE); KEYWORD_MEMORY_MIN_SCORE with a memory that holds anything
   */
  minScore?: number | undefined;
  /**
   * The most the best tool left out by the cap may score from its own words, as a share of the top tool's.
   * @default 0.3 (KEYWORD_DROPOFF); KEYWORD_MEMORY_DROPOFF with a memory that holds anything
   */
  dropoff?: number | undefined;
}

/** Options for {@link preselectByKeywords}. */
export interface KeywordOptions extends KeywordThresholds {
  /**
   * The most tools to return.
   * @default 12
   */
  max?: number | undefined;
  /**
   * What the host's past runs used, by their words: read as a field of each tool's document.
   * @default none, the catalogue's words alone
   */
  memory?: UsageMemory | undefined;
}

/** One shortlisted tool's keyword score. */
export interface KeywordScore {
  /** The tool's name. */
  name: string;
  /** The name of the server that lists it. */
  server: string;
  /** Its ranking score, its server's share included, in units of one word found in a single tool of the catalogue. */
  score: number;
}

/** What {@link preselectByKeywords} made of a request. */
export interface KeywordPreselection {
  /** The names of the best-scoring tools, best first, each once, at most the cap. */
  tools: string[];
  /** Whether the words settle the choice: a distinctive match, and the tools left out scoring well below those kept. */
  confident: boolean;
  /** The scores of the tools in `tools`, in the same order. */
  scores: KeywordScore[];
}

interface CachedIndex {
  readonly servers: readonly unknown[];
  readonly toolLists: readonly unknown[];
  readonly toolCounts: readonly number[];
  readonly index: KeywordIndex;
}

const KEYWORD_INDEXES = defineSlot("preselect.keywords", () => new WeakMap<object, CachedIndex>());

function sameShape(cached: CachedIndex, catalog: readonly CatalogServer[]): boolean {
  if (cached.servers.length !== catalog.length) return false;
  for (let i = 0; i < catalog.length; i++) {
    const server = catalog[i];
    if (cached.servers[i] !== server) return false;
    const tools = server && typeof server === "object" ? server.tools : undefined;
    if (cached.toolLists[i] !== tools) return false;
    if (cached.toolCounts[i] !== (Array.isArray(tools) ? tools.length : -1)) return false;
  }
  return true;
}

/** The keyword index of a catalogue, built on first use and kept per catalogue array in the state. @internal */
export function keywordIndexIn(state: RuntimeState, catalog: readonly CatalogServer[]): KeywordIndex {
  if (!Array.isArray(catalog)) return indexTools([]);
  const cache = slotOf(state, KEYWORD_INDEXES);
  const cached = cache.get(catalog);
  if (cached && sameShape(cached, catalog)) return cached.index;
  const servers = [...catalog];
  const toolLists = servers.map((server) => (server && typeof server === "object" ? server.tools : undefined));
  const toolCounts = toolLists.map((tools) => (Array.isArray(tools) ? tools.length : -1));
  const index = indexTools(servers);
  cache.set(catalog, { servers, toolLists, toolCounts, index });
  return index;
}

/** What the verdict reads off a ranking, in units of one word found in a single tool. @internal */
export interface KeywordEvidence {
  /** Whether the top tool matched a word few tools share. */
  distinctive: boolean;
  /** The top tool's score before its server's share (its memory's share included). */
  best: number;
  /** The best such score of a tool the cap left out. */
  leftOut: number;
  /** Whether a memory that holds anything took part. */
  remembered: boolean;
}

/** The verdict on a ranking's evidence under given thresholds. @internal */
export function isConfident(evidence: KeywordEvidence | undefined, minScore: number, dropoff: number): boolean {
  if (!evidence) return false;
  return evidence.distinctive && evidence.best >= minScore && evidence.leftOut <= dropoff * evidence.best;
}

/** The shortlist, its scores and the evidence for the verdict, thresholds not yet applied. @internal */
export function rankByKeywordsIn(
  state: RuntimeState,
  catalog: readonly CatalogServer[],
  request: string,
  options: { max?: number; memory?: UsageMemory } = {},
): { tools: string[]; scores: KeywordScore[]; evidence: KeywordEvidence | undefined } {
  const settings = options && typeof options === "object" ? options : {};
  const cap = capOf(settings.max);
  const memory = isUsageMemory(settings.memory) && settings.memory.size > 0 ? settings.memory : undefined;
  const index = keywordIndexIn(state, serversOf(catalog));
  const scored = typeof request !== "string" ? [] : memory ? scoreWithMemory(index, request, memory) : scoreTools(index, request);
  // A score of 1 is what one word found in a single tool would add at full weight, whatever the catalogue's size.
  const unit = Math.log(1 + (Math.max(index.tools.length, 1) - 0.5) / 1.5);
  // Only the head of the ranking is sorted: enough for the cap, more where names repeat across servers.
  let ranked = topTools(scored, cap + 4);
  let tools: string[] = [];
  let scores: KeywordScore[] = [];
  for (;;) {
    tools = [];
    scores = [];
    for (const entry of ranked) {
      const tool = index.tools[entry.position]!;
      if (tools.includes(tool.name)) continue;
      if (tools.length >= cap) break;
      tools.push(tool.name);
      scores.push({ name: tool.name, server: tool.server, score: entry.score / unit });
    }
    if (tools.length >= cap || ranked.length >= scored.length) break;
    ranked = topTools(scored, ranked.length * 2);
  }
  // The best score, from its own words, of any tool the cap left out.
  const kept = new Set(tools);
  let leftOut = 0;
  for (const entry of scored) {
    if (entry.own > leftOut && !kept.has(index.tools[entry.position]!.name)) leftOut = entry.own;
  }
  const top = ranked[0];
  const evidence =
    top && unit > 0 ? { distinctive: top.bestIdf >= unit / 2, best: top.own / unit, leftOut: leftOut / unit, remembered: memory !== undefined } : undefined;
  return { tools, scores, evidence };
}

/** {@link preselectByKeywords} on an explicit runtime state. @internal */
export function preselectByKeywordsIn(
  state: RuntimeState,
  catalog: readonly CatalogServer[],
  request: string,
  options: KeywordOptions = {},
): KeywordPreselection {
  const settings = options && typeof options === "object" ? options : {};
  const { tools, scores, evidence } = rankByKeywordsIn(state, catalog, request, settings);
  const remembered = evidence?.remembered === true;
  const minScore = nonNegativeNumber(settings.minScore) ?? (remembered ? KEYWORD_MEMORY_MIN_SCORE : KEYWORD_MIN_SCORE);
  const dropoff = nonNegativeNumber(settings.dropoff) ?? (remembered ? KEYWORD_MEMORY_DROPOFF : KEYWORD_DROPOFF);
  return { tools, confident: isConfident(evidence, minScore, dropoff), scores };
}

/**
 * Ranks a catalogue's tools against a request by its words, and says whether the words settle the choice.
 *
 * The score is BM25F over each tool's name (split on camelCase, snake_case and kebab-case, and
 * read also as pairs of adjacent words), its server's label (the name where there is no label)
 * and its one-line description, with the name weighted most; English function words are dropped
 * from both sides, a few English suffixes are stemmed, and a tool gains a share of the best score
 * on its own server, since the tools a request needs tend to sit together. Scores are reported
 * in units of one word found in a single tool of the catalogue, so the thresholds mean the same
 * on twenty tools as on five thousand.
 *
 * `confident` needs three things, each read from the tools' own words without their server's
 * share: the top tool matched a word that few tools share, it scored at least `minScore`, and the
 * best tool the cap left out scores at most `dropoff` times the top one. A request that matches
 * nothing is not confident.
 *
 * Given a `memory` that holds anything ({@link createUsageMemory}, fed by {@link recordUsage} or
 * by runAgentLoop's `usageMemory`), the words of the past requests that used each tool are a
 * field of its document of their own, weighted and normalised by their length, so a tool is
 * found by the words people use for it; its share counts as the tool's own for the verdict, and
 * the thresholds default to {@link KEYWORD_MEMORY_MIN_SCORE} and {@link KEYWORD_MEMORY_DROPOFF}.
 * An empty memory ranks and decides exactly as none. The catalogue's index is built on the
 * first call and reused while the same array is passed. Never throws; a catalogue or request
 * that is not what it should be ranks nothing.
 *
 * @param catalog - The connected servers and their tools.
 * @param request - The request to match, usually the user's message.
 * @param options - The cap, the confidence thresholds and the usage memory.
 * @example
 * const { tools, confident } = preselectByKeywords(catalog, "open an issue on the repo", { memory });
 * if (confident) run(tools);
 */
export function preselectByKeywords(catalog: readonly CatalogServer[], request: string, options: KeywordOptions = {}): KeywordPreselection {
  return preselectByKeywordsIn(defaultState, catalog, request, options);
}

/** The options a preselection hands the structured side task that asks the model: the side task's own, and its name. */
export interface PreselectAskOptions extends SideTaskOptions {
  /** The side task's name, for notices: always `"preselection"`. */
  name: string;
}

/** A structured side task with askJson's arguments: answers the parsed JSON, or undefined when none came back. */
export type PreselectAsk = (
  endpoint: Endpoint,
  model: string,
  system: string,
  input: string,
  schema: JsonSchema,
  options: PreselectAskOptions,
) => Promise<unknown>;

/** Options for {@link preselect}: a side task's options, read as ask reads them, and the keyword pass. */
export interface PreselectOptions extends SideTaskOptions {
  /**
   * Match the request's words first and return their shortlist when it is confident, asking
   * the model only otherwise; an object moves the confidence bar.
   * @default false
   */
  keywords?: boolean | KeywordThresholds | undefined;
  /**
   * The most tools to return.
   * @default 12
   */
  max?: number | undefined;
  /**
   * The usage memory the keyword pass reads beside the catalogue's words.
   * @default none
   */
  memory?: UsageMemory | undefined;
  /**
   * The reply ceiling in tokens; 0 sends none.
   * @default 256
   */
  maxTokens?: number | undefined;
  /**
   * The structured side task that asks the model, with askJson's arguments.
   * @default askJson, on the same runtime state
   */
  ask?: PreselectAsk | undefined;
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === "string" && error ? error : "unknown error";
}

/** {@link preselect} on an explicit runtime state. @internal */
export async function preselectIn(
  state: RuntimeState,
  config: Endpoint,
  model: string,
  catalog: readonly CatalogServer[],
  request: string,
  options: PreselectOptions = {},
): Promise<string[]> {
  const settings: PreselectOptions = options && typeof options === "object" ? options : {};
  if (typeof model !== "string" || model.trim() === "") return [];
  if (toolCount(catalog) === 0) return [];
  const cap = capOf(settings.max);
  if (settings.keywords) {
    const thresholds = typeof settings.keywords === "object" ? settings.keywords : {};
    const matched = preselectByKeywordsIn(state, catalog, typeof request === "string" ? request : "", {
      ...thresholds,
      max: cap,
      ...(settings.memory ? { memory: settings.memory } : {}),
    });
    if (matched.confident) return matched.tools;
  }
  const ask: PreselectAsk =
    typeof settings.ask === "function"
      ? settings.ask
      : (endpoint, name, system, input, schema, askOptions) => askJsonIn(state, endpoint, name, system, input, schema, askOptions);
  const askOptions: PreselectAskOptions = {
    name: "preselection",
    maxTokens: typeof settings.maxTokens === "number" ? settings.maxTokens : DEFAULT_MAX_TOKENS,
  };
  if (settings.onNotice) askOptions.onNotice = settings.onNotice;
  if (settings.signal) askOptions.signal = settings.signal;
  if (settings.temperature !== undefined) askOptions.temperature = settings.temperature;
  if (settings.reasoningEffort !== undefined) askOptions.reasoningEffort = settings.reasoningEffort;
  if (settings.extraBody !== undefined) askOptions.extraBody = settings.extraBody;
  let reply: unknown;
  try {
    reply = await ask(
      config,
      model,
      preselectSystem(catalog, cap),
      preselectInput(catalog, request, cap),
      structuredClone(PRESELECT_SCHEMA) as JsonSchema,
      askOptions,
    );
  } catch (error) {
    if (settings.signal?.aborted) throw settings.signal.reason ?? error;
    notify(settings.onNotice, `Tool preselection with ${model} failed (${describe(error)}); the run starts without a shortlist.`);
    return [];
  }
  if (reply === undefined || reply === null) {
    notify(settings.onNotice, `Tool preselection with ${model} got no readable answer; the run starts without a shortlist.`);
    return [];
  }
  const names = namesIn(reply);
  if (!names) {
    notify(settings.onNotice, `Tool preselection with ${model} answered in an unexpected shape; the run starts without a shortlist.`);
    return [];
  }
  const chosen = preselection(names, catalog, cap);
  if (chosen.length === 0 && names.length > 0) {
    notify(settings.onNotice, `Tool preselection with ${model} named no catalogued tool; the run starts without a shortlist.`);
  }
  return chosen;
}

/**
 * Chooses a run's tools before it starts, by the request's words where they settle it and by a small model otherwise.
 *
 * With `keywords`, {@link preselectByKeywords} runs first and its shortlist is returned when it
 * is confident; otherwise the model is asked through the structured side task with
 * {@link preselectSystem}, {@link preselectInput} and {@link PRESELECT_SCHEMA}, and its answer
 * read by {@link preselection}. An empty model means no preselection at all, words included,
 * and gives an empty list. A failed request or an unreadable answer gives an empty list and a
 * notice, so a preselection never fails a run; only the caller's own signal aborting it makes it
 * reject, with the signal's reason, as every call here does.
 *
 * @param config - The endpoint the small model is on.
 * @param model - The small model; empty turns preselection off.
 * @param catalog - The connected servers and their tools.
 * @param request - The request the tools are for.
 * @param options - Keywords first or not, the cap, and the side task's settings.
 * @example
 * const preselected = await preselect(config, config.toolSelectModel, catalog, prompt, {
 *   keywords: true,
 *   onNotice,
 * });
 */
export function preselect(
  config: Endpoint,
  model: string,
  catalog: readonly CatalogServer[],
  request: string,
  options: PreselectOptions = {},
): Promise<string[]> {
  return preselectIn(defaultState, config, model, catalog, request, options);
}
