/**
 * @module calibration
 * How many characters a token is worth on one model, learned from the prompt counts its
 * endpoint reports.
 *
 * Each answered turn gives one reading: the characters of the body sent over the prompt tokens
 * the endpoint charged for it. The divisor used is the highest of the model's last four
 * readings, which gives the lowest token estimate: an estimate that comes out high refuses a run
 * that would have fit, one that comes out low only costs the round trip the guard was saving.
 * Readings are kept per endpoint record and model, in the runtime state, and are not part of a
 * capabilities snapshot.
 */

import type { Endpoint } from "../shapes/config.js";
import { capabilitiesForIn, type EndpointCapabilities } from "./capabilities.js";
import { defaultState, defineSlot, slotOf, type RuntimeState } from "../state/state.js";
import { DEFAULT_CHARS_PER_TOKEN } from "../text/tokens.js";

/** How many recent readings a model keeps. */
export const CALIBRATION_READINGS = 4;

/** The lowest ratio taken as a reading, in characters a token. */
export const MIN_CHARS_PER_TOKEN = 1;

/** The highest ratio taken as a reading, in characters a token. */
export const MAX_CHARS_PER_TOKEN = 8;

/** Options for {@link calibrate}. */
export interface CalibrateOptions {
  /** The request carried an image, whose tokens are not characters; such a reading is not taken. */
  image?: boolean | undefined;
}

/** An endpoint record, or an endpoint whose record is looked up by base URL and key. */
export type CalibrationTarget = EndpointCapabilities | Pick<Endpoint, "baseUrl" | "apiKey">;

const READINGS = defineSlot("calibration", () => new WeakMap<object, Map<string, number[]>>());

function recordOf(state: RuntimeState, target: CalibrationTarget): object | undefined {
  if (typeof target !== "object" || target === null) return undefined;
  if ("baseUrl" in target && typeof target.baseUrl === "string") return capabilitiesForIn(state, target.baseUrl, target.apiKey);
  return target;
}

/** {@link calibrate} on an explicit runtime state. @internal */
export function calibrateIn(
  state: RuntimeState,
  target: CalibrationTarget,
  model: string,
  chars: number,
  promptTokens: number,
  options: CalibrateOptions = {},
): boolean {
  if (options?.image) return false;
  if (typeof model !== "string") return false;
  if (typeof chars !== "number" || typeof promptTokens !== "number" || !(promptTokens > 0) || !(chars > 0)) return false;
  const ratio = chars / promptTokens;
  if (!Number.isFinite(ratio) || ratio < MIN_CHARS_PER_TOKEN || ratio > MAX_CHARS_PER_TOKEN) return false;
  const record = recordOf(state, target);
  if (!record) return false;
  const byRecord = slotOf(state, READINGS);
  let byModel = byRecord.get(record);
  if (!byModel) {
    byModel = new Map();
    byRecord.set(record, byModel);
  }
  const readings = byModel.get(model) ?? [];
  readings.push(ratio);
  if (readings.length > CALIBRATION_READINGS) readings.splice(0, readings.length - CALIBRATION_READINGS);
  byModel.set(model, readings);
  return true;
}

/**
 * Records one reading of a model's characters per token: the characters of a request over the
 * prompt tokens its endpoint reported for it.
 *
 * A reading from a request that carried an image, or outside one to eight characters a token,
 * is not taken. Returns whether it was.
 *
 * @param target - The endpoint's record from capabilitiesFor, or the endpoint itself.
 * @param model - The model's name as the endpoint knows it.
 * @param chars - The characters of the request, counted the way requestTokens counts them.
 * @param promptTokens - The prompt tokens the endpoint reported.
 * @param options - `image: true` for a request that carried an image.
 */
export function calibrate(target: CalibrationTarget, model: string, chars: number, promptTokens: number, options?: CalibrateOptions): boolean {
  return calibrateIn(defaultState, target, model, chars, promptTokens, options);
}

/** {@link charsPerTokenFor} on an explicit runtime state. @internal */
export function charsPerTokenForIn(state: RuntimeState, target: CalibrationTarget, model: string): number {
  const record = recordOf(state, target);
  const readings = record ? slotOf(state, READINGS).get(record)?.get(model) : undefined;
  if (!readings || readings.length === 0) return DEFAULT_CHARS_PER_TOKEN;
  return Math.max(...readings);
}

/**
 * Returns the characters a token is worth on a model: the highest of its last four readings, or
 * four until one exists.
 *
 * Pass it to requestTokens, messageTokens or planCompaction as `charsPerToken`.
 *
 * @param target - The endpoint's record from capabilitiesFor, or the endpoint itself.
 * @param model - The model's name as the endpoint knows it.
 * @example
 * ```ts
 * const estimate = requestTokens(body, { charsPerToken: charsPerTokenFor(supports, config.model) });
 * ```
 */
export function charsPerTokenFor(target: CalibrationTarget, model: string): number {
  return charsPerTokenForIn(defaultState, target, model);
}
