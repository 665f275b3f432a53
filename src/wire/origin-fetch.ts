/**
 * @module wire/origin-fetch
 * The fetch the pooled clients use: undici's, following redirects itself so that credentials
 * stay on the origin they were given for.
 */

import { fetch as undiciFetch, type Dispatcher } from "undici";

/** The most redirects one request follows, as fetch itself allows. */
const MAX_REDIRECTS = 20;

/** Whether a status is one fetch follows. */
function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Headers that carry a credential by their nature, dropped on any cross-origin hop. */
const CREDENTIAL_HEADERS = ["authorization", "proxy-authorization", "cookie"];

type Fetch = (input: string | URL | Request, init?: RequestInit & { dispatcher?: Dispatcher }) => Promise<Response>;

/**
 * Builds a fetch that follows redirects the way fetch does, except that a hop to another origin
 * drops `Authorization`, `Proxy-Authorization`, `Cookie` and every header named in `custom` (an
 * endpoint's own headers, such as `x-api-key`), and keeps them dropped for the hops after it.
 * A 303, and a 301 or 302 answering a POST, goes on as a GET without a body, as fetch does.
 *
 * @internal
 */
export function originBoundFetch(custom: readonly string[]): Fetch {
  const dropped = [...CREDENTIAL_HEADERS, ...custom.map((name) => name.toLowerCase())];
  return async (input, init = {}) => {
    let url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    let headers = new Headers(init.headers as HeadersInit | undefined);
    let method = (init.method ?? "GET").toUpperCase();
    let body = init.body;
    for (let hop = 0; ; hop += 1) {
      const response = (await undiciFetch(url, { ...init, method, headers, body, redirect: "manual" } as never)) as unknown as Response;
      const location = isRedirect(response.status) ? response.headers.get("location") : null;
      if (location === null || (init.redirect !== undefined && init.redirect !== "follow")) return response;
      await response.body?.cancel().catch(() => undefined);
      if (hop >= MAX_REDIRECTS) throw new TypeError(`fetch followed ${MAX_REDIRECTS} redirects from ${url.origin} and stopped.`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) {
        headers = new Headers(headers);
        for (const name of dropped) headers.delete(name);
      }
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = null;
        headers = new Headers(headers);
        for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(name);
      }
      url = next;
    }
  };
}
