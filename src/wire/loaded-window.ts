/**
 * @module wire/loaded-window
 * The window an Ollama server has a model loaded with, read from its `/api/ps` and kept on the
 * runtime until the model may have been loaded again; and the windows an endpoint's own overflow
 * refusals named.
 *
 * Ollama's OpenAI-compatible route ignores any window the caller asks for and cuts a longer
 * prompt to the loaded one without an error, so this is the one place its window can be read.
 */

import type { Endpoint } from "../shapes/config.js";
import { slotOf, type RuntimeState } from "../state/state.js";
import { isPlainRecord } from "../text/guards.js";
import { nativeBase, routeTo } from "./client.js";
import { bounded, loadedEntry, windowKeyOf, windowNumber, WINDOWS, type LoadedWindow } from "./window-lookup.js";

/** The longest a loaded window is trusted without asking again: Ollama may reload a model after its keep-alive. */
const LOADED_FRESH_MS = 300_000;

/** How long a model the list does not hold (not loaded yet) or a failed ask is left before asking again. */
const LOADED_MISS_MS = 30_000;

/** Statuses that say a route does not exist on this server at all. */
const ROUTE_MISSING: ReadonlySet<number> = new Set([404, 405, 501]);

/** What one ask of the loaded window came to. */
export interface LoadedWindowAnswer {
  /** The window the model is loaded with, in tokens, where the server said. */
  window?: number;
  /** A request went out for it (false: the answer came from the runtime's cache). */
  asked: boolean;
  /** `/api/ps` answered 200 with something that is not Ollama's list of loaded models. */
  garbage?: boolean;
}

/** Options for {@link loadedWindowIn}. */
export interface LoadedWindowOptions {
  /** Stops the lookup; it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The clock the cache is timed on, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Ask again past a kept miss (a model not listed yet), as after a reply shows the model loaded; a kept window still answers. @default false */
  fresh?: boolean;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/** When a window read now stops being trusted: the model's own unload time, held to five minutes. */
function trustedUntil(entry: Record<string, unknown>, at: number): number {
  const expires = typeof entry.expires_at === "string" ? Date.parse(entry.expires_at) : Number.NaN;
  return Number.isFinite(expires) && expires > at ? Math.min(expires, at + LOADED_FRESH_MS) : at + LOADED_FRESH_MS;
}

/**
 * Reads the window Ollama has a model loaded with (`/api/ps`, the entry's `context_length`), from
 * the runtime's cache where it is still fresh. @internal
 *
 * A window read is kept until the model's `expires_at` (when Ollama may unload it, so the next
 * request may load it with another window), held to five minutes. A model the list does not hold,
 * an entry whose count is zero or absent, and a failed ask are kept as unknown for thirty
 * seconds. A server that has no `/api/ps` (404, 405, 501), or answers it with anything but a
 * list of models, is not asked again for the life of the runtime. Never rejects but for the
 * caller's abort.
 */
export async function loadedWindowIn(
  state: RuntimeState,
  endpoint: Endpoint & { model: string },
  options: LoadedWindowOptions = {},
): Promise<LoadedWindowAnswer> {
  const now = options.now ?? Date.now;
  const cache = slotOf(state, WINDOWS);
  if (typeof endpoint?.baseUrl !== "string" || typeof endpoint.model !== "string") return { asked: false };
  const key = windowKeyOf(endpoint.baseUrl, endpoint.apiKey, endpoint.model);
  const kept = cache.loaded?.get(key);
  if (kept && now() < kept.until && (kept.window !== undefined || options.fresh !== true))
    return { ...(kept.window !== undefined ? { window: kept.window } : {}), asked: false };
  let origin: string;
  try {
    origin = nativeBase(endpoint.baseUrl);
  } catch {
    return { asked: false };
  }
  if (cache.ollamaMissing?.has(origin)) return { asked: false };
  const keep = (found: LoadedWindow): void => void (cache.loaded ??= new Map()).set(key, found);
  try {
    return await bounded(routeTo(state, endpoint), options.signal, async (lookup) => {
      let body: unknown;
      try {
        body = await lookup.get(`${origin}/api/ps`);
      } catch (error) {
        lookup.check();
        const status = statusOf(error);
        if (status !== undefined && ROUTE_MISSING.has(status)) (cache.ollamaMissing ??= new Set()).add(origin);
        else keep({ until: now() + LOADED_MISS_MS });
        return { asked: true };
      }
      const models = isPlainRecord(body) && Array.isArray(body.models) ? body.models : undefined;
      if (models === undefined) {
        (cache.ollamaMissing ??= new Set()).add(origin);
        return { asked: true, garbage: true };
      }
      const entry = loadedEntry(models, endpoint.model);
      const window = windowNumber(entry?.context_length);
      const at = now();
      if (entry === undefined || window === undefined) {
        keep({ until: at + LOADED_MISS_MS });
        return { asked: true };
      }
      keep({ window, until: trustedUntil(entry, at) });
      return { window, asked: true };
    });
  } catch (error) {
    if (options.signal?.aborted && error === options.signal.reason) throw error;
    keep({ until: now() + LOADED_MISS_MS });
    return { asked: true };
  }
}

/** Remembers the window an endpoint's overflow refusal named for a model, for the loop's next requests and contextLimitFor. @internal */
export function rememberRevealedIn(state: RuntimeState, endpoint: Pick<Endpoint, "baseUrl" | "apiKey">, model: string, window: number): void {
  if (typeof endpoint?.baseUrl !== "string" || typeof model !== "string" || !(window > 0)) return;
  const cache = slotOf(state, WINDOWS);
  const key = windowKeyOf(endpoint.baseUrl, endpoint.apiKey, model);
  (cache.revealed ??= new Map()).set(key, window);
  cache.windows.set(key, window);
}

/** The window an endpoint's overflow refusal named for a model, where one did. @internal */
export function revealedWindowIn(state: RuntimeState, endpoint: Pick<Endpoint, "baseUrl" | "apiKey">, model: string): number | undefined {
  if (typeof endpoint?.baseUrl !== "string" || typeof model !== "string") return undefined;
  return slotOf(state, WINDOWS).revealed?.get(windowKeyOf(endpoint.baseUrl, endpoint.apiKey, model));
}
