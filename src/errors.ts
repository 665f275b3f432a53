/**
 * @module errors
 * Turning a caught unknown into text a run row can hold.
 */

import { describeError } from "./internal/error-body.js";

const LIMIT = 2000;

/**
 * Turns any caught value into a one-line message a run row or a tool result can hold.
 *
 * An Error gives its message (the server's own words where an SDK error carries a body), a
 * string is itself, an object its `message`/`error` fields or its JSON, and anything else its
 * String form. The result is never empty and never longer than 2,000 characters.
 */
export function errorMessage(error: unknown): string {
  let text = "";
  try {
    if (typeof error === "string") text = error;
    else if (error instanceof Error) {
      text = error.message;
      if (!text) text = describeError(error).message;
      if (!text) text = error.name;
    } else if (typeof error === "object" && error !== null) {
      text = describeError(error).message;
      if (!text) {
        try {
          text = JSON.stringify(error) ?? "";
        } catch {
          text = Object.prototype.toString.call(error);
        }
      }
    } else if (error !== undefined) text = String(error);
  } catch {
    text = "";
  }
  text = text.replace(/\s+/g, " ").trim();
  if (!text) return "Unknown error";
  return text.length > LIMIT ? `${text.slice(0, LIMIT - 1)}…` : text;
}
