/**
 * @module text/content-text
 * Reads the text of a message's content, whether it is a string or a list of parts.
 */

/**
 * Returns the text of a message's content: a string as it is, or its text parts joined with nothing between.
 *
 * Parts that are not text (images, anything unreadable) add nothing; content that is neither a
 * string nor an array reads as "".
 */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (part && part.type === "text" && typeof part.text === "string") text += part.text;
  }
  return text;
}
