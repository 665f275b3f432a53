/**
 * @module wire/base-url
 * How a base URL is written down for keying: trimmed of space and trailing slashes, and with its
 * scheme and host lower-cased, so one server spelt two ways is one pool entry and one record.
 */

/** The longest base URL taken; past it the text can only be garbage, and is refused. */
export const MAX_BASE_URL_CHARS = 8192;

/** Whether a character code is one `String.prototype.trim` removes, or a slash. */
function trailing(code: number, slashes: boolean): boolean {
  return (
    (slashes && code === 47) ||
    code <= 32 ||
    code === 160 ||
    code === 0xfeff ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x1680 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0x85
  );
}

/**
 * Trims a base URL of surrounding space and trailing slashes, leaving the rest as written.
 *
 * One pass from each end, no regular expression: the time is linear in the length, and trimming
 * twice gives what trimming once gave. A base URL longer than {@link MAX_BASE_URL_CHARS} is a
 * TypeError naming `baseUrl`.
 *
 * @internal
 */
export function trimBaseUrl(baseUrl: string): string {
  if (baseUrl.length > MAX_BASE_URL_CHARS) {
    throw new TypeError(`baseUrl is ${baseUrl.length} characters long, more than the ${MAX_BASE_URL_CHARS} a base URL may be.`);
  }
  let start = 0;
  let end = baseUrl.length;
  while (start < end && trailing(baseUrl.charCodeAt(start), false)) start++;
  while (end > start && trailing(baseUrl.charCodeAt(end - 1), true)) end--;
  return start === 0 && end === baseUrl.length ? baseUrl : baseUrl.slice(start, end);
}

/**
 * Normalises a base URL for comparison and pooling: surrounding space and trailing slashes go,
 * and the scheme and host are lower-cased (as URL parsing does, default port dropped).
 *
 * A URL with no authority (`name:rest`, or an empty host) has no host to lower-case and is kept as trimmed, so
 * normalising a normalised URL gives it back unchanged. Userinfo is not part of the result.
 *
 * @internal
 */
export function normaliseBaseUrl(baseUrl: string): string {
  const trimmed = trimBaseUrl(baseUrl);
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return trimmed;
  }
  if (url.host === "" || !url.href.startsWith(`${url.protocol}//`)) return trimmed;
  const search = trimBaseUrl(url.search);
  return `${url.protocol}//${url.host}${trimBaseUrl(url.pathname)}${search === "?" ? "" : search}`;
}
