/**
 * @module text/content-text
 * Reads the text of a message's content, whether it is a string or a list of parts.
 */

/** Options of {@link contentText}. */
export interface ContentTextOptions {
  /**
   * What an image part reads as, for a reader that must show a person where an image was.
   * @default ""
   */
  image?: string | undefined;
  /**
   * What goes between the pieces (text parts, images), empty ones left out.
   * @default ""
   */
  separator?: string | undefined;
}

/**
 * Returns the text of a message's content: a string as it is, or its text parts joined with nothing between.
 *
 * Parts that are not text (anything unreadable) add nothing, and images add `options.image`;
 * content that is neither a string nor an array reads as "".
 */
export function contentText(content: unknown, options: ContentTextOptions = {}): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const image = options.image ?? "";
  const pieces: string[] = [];
  for (const part of content as { type?: unknown; text?: unknown }[]) {
    if (!part || typeof part !== "object") continue;
    const piece = part.type === "text" && typeof part.text === "string" ? part.text : part.type === "image_url" ? image : "";
    if (piece !== "") pieces.push(piece);
  }
  return pieces.join(options.separator ?? "");
}
