/**
 * @module wire/base-url
 * How a base URL is written down for keying: trimmed of space and trailing slashes, and with its
 * scheme and host lower-cased, so one server spelt two ways is one pool entry and one record.
 */

/**
 * Trims a base URL of surrounding space and trailing slashes, leaving the rest as written.
 *
 * @internal
 */
export function trimBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, "");
}

/**
 * Normalises a base URL for comparison and pooling: surrounding space and trailing slashes go,
 * and the scheme and host are lower-cased (as URL parsing does, default port dropped).
 *
 * @internal
 */
export function normaliseBaseUrl(baseUrl: string): string {
  const trimmed = trimBaseUrl(baseUrl);
  try {
    const url = new URL(trimmed);
    const path = url.pathname.replace(/\/+$/, "");
    return `${url.protocol}//${url.host}${path}${url.search}`;
  } catch {
    return trimmed;
  }
}
