/**
 * @module cli/listing
 * Reads an endpoint's model listing with plain fetch, which is also how the command first finds
 * out whether a URL is an OpenAI-compatible API at all: nothing answering, a refused key and an
 * HTML page are each told apart.
 */
import { isModelLoading, type ListedModel } from "../index.js";
import { CliFailure, KEY_ADVICE, looksLikeHtml, oneLine, readFailure } from "./errors.js";
import type { ProbeOptions } from "./probe-types.js";

/**
 * GETs the model listing with plain fetch, so an HTML page or a refused key is told apart from a
 * missing route or a failing one.
 *
 * Answers the models listed, or — for a listing that answered an error status — the failure
 * (not thrown: a caller that was given a model may carry on without the listing): `loading`
 * where the server says it is still loading the model, otherwise `unknownModel`, each with the
 * status and the server's words. Throws a {@link CliFailure} where nothing answers, the key is
 * refused or the answer is not an OpenAI-compatible API's.
 */
export async function readListing(
  options: Pick<ProbeOptions, "apiKey" | "headers" | "signal" | "timeoutSeconds">,
  base: string,
): Promise<ListedModel[] | CliFailure> {
  const signals = [AbortSignal.timeout((options.timeoutSeconds ?? 60) * 1000), ...(options.signal ? [options.signal] : [])];
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${base}/models`, {
      headers: { ...options.headers, accept: "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      signal: AbortSignal.any(signals),
    });
    text = await response.text();
  } catch (error) {
    throw readFailure(options.signal?.aborted ? (options.signal.reason ?? error) : error, base);
  }
  if (response.status === 401 || response.status === 403) {
    throw new CliFailure("unauthorized", `${base} refused the key (HTTP ${response.status}): ${messageIn(text) || "no reason given"}. ${KEY_ADVICE}`);
  }
  const type = response.headers.get("content-type") ?? "";
  if (/html/i.test(type) || looksLikeHtml(text)) {
    throw new CliFailure(
      "notOpenAi",
      `${base} answered GET /models with an HTML page (HTTP ${response.status}), not an OpenAI-compatible API; check the URL ends at the API root, usually /v1.`,
    );
  }
  if (!response.ok) return listingFailure(base, response.status, text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliFailure(
      "notOpenAi",
      `${base} answered GET /models with something that is not JSON (${oneLine(text, 80) || "an empty body"}); it does not look like an OpenAI-compatible API.`,
    );
  }
  const data = Array.isArray(body) ? body : body && typeof body === "object" ? (body as { data?: unknown }).data : undefined;
  if (!Array.isArray(data)) {
    throw new CliFailure(
      "notOpenAi",
      `${base} answered GET /models with JSON that is not a model listing (${oneLine(text, 80)}); it does not look like an OpenAI-compatible API.`,
    );
  }
  return data.filter((entry): entry is ListedModel => !!entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string");
}

/** The failure of a listing that answered an error status, with its status and words. */
function listingFailure(base: string, status: number, text: string): CliFailure {
  const words = messageIn(text);
  const said = `${base} answered GET /models with HTTP ${status}: ${words || "no reason given"}`;
  if (isModelLoading({ status, message: words }))
    return new CliFailure("loading", `${said}. The server is still loading the model; try again once it has loaded.`);
  return new CliFailure("unknownModel", `${said}; with no listing there is no model to choose from, so pass --model NAME.`);
}

function messageIn(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = parsed.error;
    if (typeof error === "string") return oneLine(error);
    if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string")
      return oneLine((error as { message: string }).message);
    if (typeof parsed.message === "string") return oneLine(parsed.message);
    if (typeof parsed.detail === "string") return oneLine(parsed.detail);
  } catch {
    // Not JSON: the text itself is the reason.
  }
  return oneLine(text, 160);
}
