/**
 * @module cli/redact
 * Hides the password of every URL in a line before the command line prints it.
 */

/** Whether a character code ends a URL's authority: `/`, `?`, `#`, a quote or white space. */
function endsAuthority(code: number): boolean {
  return code === 47 || code === 63 || code === 35 || code === 34 || code === 39 || code === 96 || code <= 32;
}

/**
 * Replaces the password in every `scheme://user:password@host` of a text with `***`, in one pass.
 *
 * @example
 * ```ts
 * redactUrls("at http://me:pw@host/v1"); // "at http://me:***@host/v1"
 * ```
 */
export function redactUrls(text: string): string {
  let out = "";
  let from = 0;
  let at = text.indexOf("://");
  while (at !== -1) {
    const start = at + 3;
    let end = start;
    while (end < text.length && !endsAuthority(text.charCodeAt(end))) end++;
    const authority = text.slice(start, end);
    const userEnd = authority.lastIndexOf("@");
    const colon = userEnd === -1 ? -1 : authority.indexOf(":");
    if (colon !== -1 && colon < userEnd) {
      out += `${text.slice(from, start + colon + 1)}***`;
      from = start + userEnd;
    }
    // An authority holds no slash, so the next "://" can begin at most at its last character.
    at = text.indexOf("://", Math.max(start, end - 1));
  }
  return from === 0 ? text : out + text.slice(from);
}
