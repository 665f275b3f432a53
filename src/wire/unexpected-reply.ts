/**
 * @module wire/unexpected-reply
 * The reply that is not a chat completion at all: a page where an event stream or a completion
 * body was expected (a login wall, a proxy's error page, a web server's index), named by its
 * status, content type and URL, with the page's own words.
 */

import { AgentCoreError, brand, isErrorNamed, type AgentCoreErrorOptions } from "../text/error-base.js";

/** How much of the page's text the error keeps and quotes. */
const WORDS_KEPT = 300;

/** Options for an {@link UnexpectedReply}. */
export interface UnexpectedReplyOptions extends AgentCoreErrorOptions {
  /** The HTTP status the reply came with. */
  status: number;
  /** The reply's content type, as sent ("" where it sent none). */
  contentType: string;
  /** The URL the request went to. */
  url: string;
  /** The reply's body as text (cut to its first 300 characters of words). */
  body: string;
}

/** The readable words of a body: an HTML page's title and text without its tags, space folded. */
export function pageWords(body: string): string {
  let text = body;
  if (/^\s*</.test(text)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1]?.trim();
    const inner = text
      .replace(/<(script|style|head)[\s\S]*?<\/\1\s*>/gi, " ")
      .replace(/<[^>]*>/g, " ")
      .replace(/&nbsp;/g, " ")
      .replace(/&amp;/g, "&")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">");
    text = title && !inner.includes(title) ? `${title}: ${inner}` : inner;
  }
  const folded = text.replace(/\s+/g, " ").trim();
  return folded.length > WORDS_KEPT ? `${folded.slice(0, WORDS_KEPT)}…` : folded;
}

/**
 * A reply that is neither an event stream nor a chat completion body: the request reached a
 * server, but not the chat API.
 *
 * Raised for a 2xx reply whose content type is not `text/event-stream` or JSON (an HTML login
 * wall or error page a proxy answers with 200), and for a JSON body that holds neither a choice
 * nor an error. It is not retried: the same URL gives the same page. `status` is the reply's, so
 * the classifiers read it as a refusal of that status, and its words as they read any body.
 */
export class UnexpectedReply extends AgentCoreError {
  override readonly name = "UnexpectedReply" as const;
  /** The HTTP status the reply came with. */
  readonly status: number;
  /** The reply's content type ("" where none was sent). */
  readonly contentType: string;
  /** The URL the request went to. */
  readonly url: string;
  /** The page's own words: its title and text, tags taken out, up to 300 characters. */
  readonly body: string;

  static {
    brand(this, "UnexpectedReply");
  }

  /** Makes the error; the message names the status, the content type, the URL and the page's words. */
  constructor(options: UnexpectedReplyOptions) {
    const words = pageWords(options.body);
    const type = options.contentType === "" ? "no content type" : options.contentType;
    super({
      message:
        options.message ??
        `${options.url} answered ${options.status} with ${type}, not a chat completion (an event stream or a JSON completion)${words ? `: ${words}` : "; the body was empty."}`,
      cause: options.cause,
    });
    this.status = options.status;
    this.contentType = options.contentType;
    this.url = options.url;
    this.body = words;
  }

  /** Tells an UnexpectedReply from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is UnexpectedReply {
    return isErrorNamed(value, "UnexpectedReply");
  }
}
