/**
 * @module spec/secrets
 * Finds the places in an agent document that may hold a credential, for a host to warn before it
 * calls the document safe to share.
 *
 * Imports nothing at runtime but its sibling value helpers, so the `./spec` entry stays loadable
 * in a browser. The walk is iterative; no value is ever copied into a hint.
 */
import { isCredentialName, isPlainObject, joinPath, ownValue, withoutReferences } from "./values.js";

/** Why a place may hold a credential, as constants. */
export const SecretSign = {
  /** A URL with `user:pass@` (or a lone user) before its host. */
  Userinfo: "userinfo",
  /** A URL whose query names a credential, such as `?token=` or `?api_key=`. */
  Query: "query",
  /** The value of an `--api-key` style flag among a server's args, after it or as `--flag=value`. */
  Flag: "flag",
  /** A string shaped like a key: a known prefix (sk-, ghp_ …), a JWT, or a long high-entropy run. */
  Value: "value",
  /** A field whose name reads like a credential (apiKey, token, GITHUB_TOKEN, Authorization …). */
  Field: "field",
} as const;

/** One reason a place may hold a credential. */
export type SecretSign = (typeof SecretSign)[keyof typeof SecretSign];

/** A place in a document that may hold a credential, and why; never the value itself. */
export interface SpecSecret {
  /** Where it is, as `bundle.mcpServers[0].args[2]`. */
  path: string;
  /** The bundled server the place belongs to, or `""` for a place outside the bundle. */
  server: string;
  /** Why it was named. */
  sign: SecretSign;
}

const KEY_PREFIX =
  /^(?:sk-|sk_live_|sk_test_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|hf_|npm_|pypi-|dop_v1_|shpat_|AKIA|ASIA|AIza|ya29\.)/;
const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$/;
const SCHEME_WORD = /^(?:bearer|basic|token)\s+/i;
const FLAG_WITH_VALUE = /^--?([A-Za-z][\w.-]*)=([\s\S]*)$/;
const FLAG = /^--?([A-Za-z][\w.-]*)$/;
const FLAG_NAME = /key|token|secret|pass|auth|credential|bearer/i;
const QUERY_NAMES: ReadonlySet<string> = new Set(["sig", "signature", "code", "x-amz-signature", "x-goog-signature"]);

/** What is left of a value once its `${VAR}` references and a leading auth scheme are taken out. */
function substance(text: string): string {
  return withoutReferences(text.trim().replace(SCHEME_WORD, "")).trim();
}

function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

/** Whether a string is shaped like a key; `${VAR}` references count as nothing. */
export function looksLikeKey(text: string): boolean {
  const core = substance(text);
  if (core.length < 16 || /\s/.test(core)) return false;
  if (KEY_PREFIX.test(core) && core.length >= 20) return true;
  if (JWT.test(core)) return true;
  if (!/^[A-Za-z0-9_\-+=]+$/.test(core)) return false;
  let longest = "";
  for (const segment of core.split(/[-_]/)) if (segment.length > longest.length) longest = segment;
  return longest.length >= 20 && /[0-9]/.test(longest) && /[A-Za-z]/.test(longest) && entropy(longest) >= 3.5;
}

/** The sign a URL carries, if any: credentials before the host or in the query. */
export function urlSign(text: string): SecretSign | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/.exec(text);
  if (!match) return undefined;
  const authority = match[1] ?? "";
  const at = authority.lastIndexOf("@");
  if (at >= 0 && withoutReferences(authority.slice(0, at)).replace(/:/g, "") !== "") return SecretSign.Userinfo;
  for (const pair of (match[3] ?? "").split("&")) {
    const equals = pair.indexOf("=");
    if (equals <= 0) continue;
    let name = pair.slice(0, equals);
    try {
      name = decodeURIComponent(name);
    } catch {
      // A malformed escape is read as written.
    }
    const value = substance(pair.slice(equals + 1));
    if (value !== "" && (isCredentialName(name) || QUERY_NAMES.has(name.toLowerCase()))) return SecretSign.Query;
  }
  return undefined;
}

interface ScanFrame {
  value: unknown;
  path: string;
  server: string;
  /** The key this value sits under in its parent object, if any. */
  key?: string;
  /** Depth below the document, to tell which frame is a bundled server. */
  depth: number;
  /** Whether this value is a bundled server's container (`bundle.mcpServers`). */
  inServers?: boolean;
}

/** The sign for a flag's value among args, keyed by the index it was found at. */
function flagSigns(args: readonly unknown[]): Map<number, SecretSign> {
  const signs = new Map<number, SecretSign>();
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (typeof arg !== "string") continue;
    const inline = FLAG_WITH_VALUE.exec(arg);
    if (inline) {
      if (FLAG_NAME.test(inline[1] ?? "") && substance(inline[2] ?? "") !== "") signs.set(index, SecretSign.Flag);
      continue;
    }
    const flag = FLAG.exec(arg);
    if (!flag || !FLAG_NAME.test(flag[1] ?? "")) continue;
    const next = args[index + 1];
    if (typeof next !== "string" || next.startsWith("-") || substance(next) === "") continue;
    signs.set(index + 1, SecretSign.Flag);
    index += 1;
  }
  return signs;
}

/**
 * Names the places in an agent document that may hold a credential, and why.
 *
 * Reads any value: a parsed spec, an exported one, or raw JSON before parsing. Each place is
 * reported once, under the strongest of its signs (field, then flag, userinfo, query, value). A
 * string that is only `${VAR}` references is a reference, not a credential, and is not reported.
 * It is a guess both ways: a bare positional secret is missed, and a flag named `--keyboard` is
 * reported.
 *
 * @example
 * for (const { path, server, sign } of findSpecSecrets(exportSpec(spec))) {
 *   console.warn(`${server}: ${path} may hold a credential (${sign})`);
 * }
 */
export function findSpecSecrets(document: unknown): SpecSecret[] {
  const found: SpecSecret[] = [];
  const seen = new WeakSet<object>();
  const stack: ScanFrame[] = [{ value: document, path: "", server: "", depth: 0 }];
  try {
    while (stack.length > 0) {
      const frame = stack.pop() as ScanFrame;
      const { value, path } = frame;
      if (typeof value === "string" || typeof value === "number") {
        const sign = stringSign(frame);
        if (sign !== undefined) found.push({ path, server: frame.server, sign });
        continue;
      }
      if (typeof value !== "object" || value === null || seen.has(value)) continue;
      seen.add(value);
      const children: ScanFrame[] = [];
      if (Array.isArray(value)) {
        const flags = frame.key === "args" ? flagSigns(value) : undefined;
        for (let index = 0; index < value.length; index += 1) {
          const child = value[index];
          const childPath = joinPath(path, index);
          const server = frame.inServers ? serverName(child, `#${index}`) : frame.server;
          const flagged = flags?.get(index);
          if (flagged !== undefined) {
            found.push({ path: childPath, server, sign: flagged });
            continue;
          }
          children.push({ value: child, path: childPath, server, depth: frame.depth + 1 });
        }
      } else if (isPlainObject(value)) {
        for (const key of Object.keys(value)) {
          const child = ownValue(value, key);
          const childPath = joinPath(path, key);
          const server = frame.inServers ? serverName(child, key) : frame.server;
          const inServers = frame.depth === 1 && path === "bundle" && key === "mcpServers";
          children.push({ value: child, path: childPath, server, key, depth: frame.depth + 1, inServers });
        }
      }
      for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index] as ScanFrame);
    }
  } catch {
    // A value that throws when read (a hostile getter, a revoked proxy) ends the walk; what was found stands.
  }
  return found;
}

function serverName(entry: unknown, fallback: string): string {
  const name = isPlainObject(entry) ? ownValue(entry, "name") : undefined;
  return typeof name === "string" && name !== "" ? name : fallback;
}

function stringSign(frame: ScanFrame): SecretSign | undefined {
  const text = String(frame.value);
  if (frame.key !== undefined && isCredentialName(frame.key) && substance(text) !== "") return SecretSign.Field;
  if (typeof frame.value !== "string") return undefined;
  return urlSign(text) ?? (looksLikeKey(text) ? SecretSign.Value : undefined);
}
