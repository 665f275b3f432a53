/**
 * @module spec/secrets
 * Finds the places in an agent document that may hold a credential, for a host to warn before it
 * calls the document safe to share.
 *
 * Imports nothing at runtime but its sibling value helpers, so the `./spec` entry stays loadable
 * in a browser. The walk is iterative; no value is ever copied into a hint. Every check reads its
 * string once (a URL's parts, a command's words, a name's words), so the time is linear in the
 * document's text.
 */
import { isCredentialName, isPlainObject, joinPath, MAX_NAME_LENGTH, nameWords, ownValue, withoutReferences } from "./values.js";

/** Why a place may hold a credential, as constants. */
export const SecretSign = {
  /** A URL with `user:pass@` (or a lone user) before its host. */
  Userinfo: "userinfo",
  /**
   * A URL whose query or `#fragment` names a credential (`?token=`, `?api_key=`, `?jwt=`,
   * `#access_token=`) or carries a key-shaped value under any name.
   */
  Query: "query",
  /**
   * The value of a credential flag (`--api-key`, `--token`, `--password`) among a server's args or
   * in its command, after it or as `--flag=value`.
   */
  Flag: "flag",
  /** A header line naming a credential (`Authorization: Bearer …`, `X-Api-Key: …`) among args or in a command. */
  Header: "header",
  /**
   * A string shaped like a key: a known prefix (sk-, ghp_ …), a JWT, or a long high-entropy run,
   * whole or as a segment of a URL's path or a word of a command; or a UUID where no name calls it
   * an id (an env or header value, a positional arg, a flag's value).
   */
  Value: "value",
  /**
   * A field whose name reads like a credential (apiKey, token, GITHUB_TOKEN, Authorization …), or
   * a `NAME=value` assignment of one inside a command.
   */
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

/** The signs from strongest to weakest: a place with several is reported under the first. */
const STRENGTH: readonly SecretSign[] = [SecretSign.Field, SecretSign.Flag, SecretSign.Header, SecretSign.Userinfo, SecretSign.Query, SecretSign.Value];

/** The stronger of two signs, either of which may be absent. */
function stronger(a: SecretSign | undefined, b: SecretSign | undefined): SecretSign | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return STRENGTH.indexOf(a) <= STRENGTH.indexOf(b) ? a : b;
}

const KEY_PREFIX =
  /^(?:sk-|sk_live_|sk_test_|rk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|hf_|npm_|pypi-|dop_v1_|shpat_|AKIA|ASIA|AIza|ya29\.)/;
const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$/;
const UUID = /^\{?[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\}?$/;
const HEX = /^[0-9A-Fa-f]+$/;
const SCHEME_WORD = /^(?:bearer|basic|token)\s+/i;
const FLAG_WITH_VALUE = /^--?([A-Za-z][\w.-]*)=([\s\S]*)$/;
const FLAG = /^--?([A-Za-z][\w.-]*)$/;
/** `Name: value`, as an HTTP header line is written. */
const HEADER_LINE = /^\s*([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(\S[\s\S]*)$/;
/** `NAME=value`, as a shell command sets an environment variable. */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const QUERY_NAMES: ReadonlySet<string> = new Set(["sig", "signature", "code", "jwt", "session", "x-amz-signature", "x-goog-signature"]);

/** A flag's last word (or the whole of a one-word flag) that names a credential, beyond a field's words. */
const FLAG_WORDS: ReadonlySet<string> = new Set(["pass", "pw", "pwd", "authtoken", "accesstoken", "apitoken", "accesskey", "secretkey", "privatekey"]);

/** The last words of a name that say its value is an identifier (`PROJECT_ID`, `--workspace`), which a UUID usually is. */
const ID_WORDS: ReadonlySet<string> = new Set([
  "id",
  "ids",
  "uuid",
  "guid",
  "uid",
  "identifier",
  "project",
  "workspace",
  "org",
  "organization",
  "tenant",
  "account",
  "team",
  "user",
  "client",
  "channel",
  "database",
  "db",
  "collection",
  "space",
  "page",
  "folder",
  "board",
  "instance",
  "device",
  "region",
  "trace",
  "request",
]);

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

/** Whether a string is a UUID (8-4-4-4-12 hex digits, braces allowed). */
function isUuid(text: string): boolean {
  return UUID.test(substance(text));
}

/** Whether a name (a field, a flag, a query parameter) says its value is an identifier. */
function namesAnId(name: string | undefined): boolean {
  if (name === undefined || name.length > MAX_NAME_LENGTH) return false;
  const words = nameWords(name);
  const last = words[words.length - 1];
  return last !== undefined && (ID_WORDS.has(last) || words.includes("id"));
}

/** Whether a flag's name reads like a credential's: `--api-key`, `--token`, `--pass`, `--authtoken`, not `--keyboard` or `--max-tokens`. */
function isCredentialFlag(name: string): boolean {
  if (name.length > MAX_NAME_LENGTH) return false;
  if (isCredentialName(name)) return true;
  const words = nameWords(name);
  const last = words[words.length - 1];
  return last !== undefined && FLAG_WORDS.has(last);
}

/** Whether a part of a URL is shaped like a key: a hex run (a commit, a digest) is a name there, not a key. */
function keyInUrl(text: string): boolean {
  return looksLikeKey(text) && !HEX.test(text);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // A malformed escape is read as written.
    return text;
  }
}

/** The sign of `name=value&…` pairs (a query or a fragment): a credential's name, or a key-shaped value. */
function pairsSign(pairs: string): SecretSign | undefined {
  let sign: SecretSign | undefined;
  for (const pair of pairs.split("&")) {
    const equals = pair.indexOf("=");
    if (equals <= 0) continue;
    const name = decoded(pair.slice(0, equals));
    const value = substance(decoded(pair.slice(equals + 1)));
    if (value === "") continue;
    if (isCredentialName(name) || QUERY_NAMES.has(name.toLowerCase()) || keyInUrl(value)) sign = SecretSign.Query;
  }
  return sign;
}

/**
 * The sign a URL carries, if any: credentials before the host, a credential in the query or
 * fragment, or a key-shaped segment of the path.
 */
export function urlSign(text: string): SecretSign | undefined {
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#([\s\S]*))?/.exec(text);
  if (!match) return undefined;
  const authority = match[1] ?? "";
  const at = authority.lastIndexOf("@");
  if (at >= 0 && withoutReferences(authority.slice(0, at)).replace(/:/g, "") !== "") return SecretSign.Userinfo;
  const query = pairsSign(match[3] ?? "") ?? pairsSign(match[4] ?? "");
  if (query !== undefined) return query;
  const path = match[2] ?? "";
  for (let start = 0; start < path.length;) {
    const slash = path.indexOf("/", start);
    const end = slash < 0 ? path.length : slash;
    // Only a segment as long as a key is cut out; a segment may join a name and a key (`bot123:AAH…`).
    if (end - start >= 16) for (const part of decoded(path.slice(start, end)).split(":")) if (keyInUrl(part)) return SecretSign.Value;
    start = end + 1;
  }
  return undefined;
}

/** The sign of an `Authorization: Bearer …` style line: a credential's header name with a value. */
function headerSign(text: string): SecretSign | undefined {
  const line = HEADER_LINE.exec(text);
  if (!line || !isCredentialName(line[1] as string)) return undefined;
  return substance(line[2] as string) !== "" ? SecretSign.Header : undefined;
}

/**
 * The sign of a string that is a server's argument or a word of its command: a header line, a
 * URL's sign, a key-shaped value, or a UUID where `name` (the flag before it) does not call it an id.
 */
function argumentSign(text: string, name: string | undefined): SecretSign | undefined {
  const sign = headerSign(text) ?? urlSign(text);
  if (sign !== undefined) return sign;
  return looksLikeKey(text) || (isUuid(text) && !namesAnId(name)) ? SecretSign.Value : undefined;
}

/** The sign of each word of an argument list (or a command's words), by index; a flag's value is read under the flag's name. */
function wordSigns(words: readonly unknown[]): Map<number, SecretSign> {
  const signs = new Map<number, SecretSign>();
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    if (typeof word !== "string") continue;
    const inline = FLAG_WITH_VALUE.exec(word);
    if (inline) {
      const flag = inline[1] as string;
      const value = inline[2] as string;
      if (isCredentialFlag(flag) && substance(value) !== "") signs.set(index, SecretSign.Flag);
      else {
        const sign = argumentSign(value, flag);
        if (sign !== undefined) signs.set(index, sign);
      }
      continue;
    }
    const flag = FLAG.exec(word)?.[1];
    const next = words[index + 1];
    if (flag !== undefined && typeof next === "string" && !next.startsWith("-")) {
      // A flag and its value: the value is read under the flag's name.
      if (isCredentialFlag(flag)) {
        if (substance(next) !== "") signs.set(index + 1, SecretSign.Flag);
      } else {
        const sign = argumentSign(next, flag);
        if (sign !== undefined) signs.set(index + 1, sign);
      }
      index += 1;
      continue;
    }
    if (flag !== undefined) continue;
    const sign = argumentSign(word, undefined);
    if (sign !== undefined) signs.set(index, sign);
  }
  return signs;
}

/** Splits a command line into words at whitespace, keeping a quoted stretch (`'…'`, `"…"`) in its word. */
function commandWords(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let quote = "";
  let inWord = false;
  for (let index = 0; index < command.length; index += 1) {
    const char = command[index] as string;
    if (quote !== "") {
      if (char === quote) quote = "";
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The strongest sign among a command line's words: a credential assignment, a flag's value, a header line, a URL, a key. */
function commandSign(command: string): SecretSign | undefined {
  const words = commandWords(command);
  let sign: SecretSign | undefined;
  for (const word of words) {
    const assignment = ASSIGNMENT.exec(word);
    if (assignment && substance(assignment[2] as string) !== "") {
      if (isCredentialName(assignment[1] as string)) sign = stronger(sign, SecretSign.Field);
    }
  }
  for (const found of wordSigns(words).values()) sign = stronger(sign, found);
  return sign;
}

interface ScanFrame {
  value: unknown;
  /** The frame of the container this value sits in; none for the document itself. */
  up?: ScanFrame | undefined;
  /** The key or index this value sits under in that container. */
  segment?: string | number | undefined;
  server: string;
  /** The key this value sits under in its parent object, if any. */
  key?: string | undefined;
  /** The key of the object holding this value (`env` for an env var's value), if any. */
  parent?: string | undefined;
  /** Depth below the document, to tell which frame is a bundled server. */
  depth: number;
  /** Whether this value is a bundled server's container (`bundle.mcpServers`). */
  inServers?: boolean | undefined;
}

/**
 * Names the places in an agent document that may hold a credential, and why.
 *
 * Reads any value: a parsed spec, an exported one, or raw JSON before parsing. Each place is
 * reported once, under the strongest of its signs (field, flag, header, userinfo, query, value).
 * A string that is only `${VAR}` references is a reference, not a credential, and is not reported.
 * Args are read as a command line is: a credential flag's value (`--api-key x`, `--token=x`), a
 * header line (`--header "Authorization: Bearer x"`), a URL, a key-shaped value or a UUID that no
 * flag calls an id; a `command` string is split into words and read the same way, with
 * `NAME=value` assignments of credential names. Flags are matched by their words, so `--keyboard`,
 * `--max-tokens` and `--auth-type` are not credential flags. It is a guess both ways: a short
 * secret with nothing naming it (`hunter2` alone) is missed, and a flag whose last word is `key`
 * (`--sort-key date`) is reported.
 *
 * @example
 * for (const { path, server, sign } of findSpecSecrets(exportSpec(spec))) {
 *   console.warn(`${server}: ${path} may hold a credential (${sign})`);
 * }
 */
export function findSpecSecrets(document: unknown): SpecSecret[] {
  const found: SpecSecret[] = [];
  // A plain set: it lives only as long as the call, and is faster than a weak one.
  const seen = new Set<object>();
  const stack: ScanFrame[] = [{ value: document, server: "", depth: 0 }];
  try {
    while (stack.length > 0) {
      const frame = stack.pop() as ScanFrame;
      const { value } = frame;
      if (typeof value === "string" || typeof value === "number") {
        readLeaf(frame, found);
        continue;
      }
      if (typeof value !== "object" || value === null || seen.has(value)) continue;
      seen.add(value);
      // Children are read in order: leaves at once, until the first container, whose subtree must
      // come before the siblings after it; from there on each child waits on the stack.
      const children: ScanFrame[] = [];
      if (Array.isArray(value)) {
        const signs = frame.key === "args" ? wordSigns(value) : undefined;
        for (let index = 0; index < value.length; index += 1) {
          const child = value[index];
          const server = frame.inServers ? serverName(child, `#${index}`) : frame.server;
          if (signs !== undefined && typeof child === "string") {
            // An argument is read once, in the light of the flag before it.
            const sign = signs.get(index);
            if (sign !== undefined) found.push({ path: joinPath(pathOf(frame), index), server, sign });
            continue;
          }
          const next: ScanFrame = { value: child, up: frame, segment: index, server, depth: frame.depth + 1 };
          if (children.length > 0 || (typeof child === "object" && child !== null)) children.push(next);
          else readLeaf(next, found);
        }
      } else if (isPlainObject(value)) {
        for (const key of Object.keys(value)) {
          const child = ownValue(value, key);
          const server = frame.inServers ? serverName(child, key) : frame.server;
          const inServers = frame.depth === 1 && frame.key === "bundle" && key === "mcpServers";
          const next: ScanFrame = { value: child, up: frame, segment: key, server, key, parent: frame.key, depth: frame.depth + 1, inServers };
          if (children.length > 0 || (typeof child === "object" && child !== null)) children.push(next);
          else readLeaf(next, found);
        }
      }
      for (let index = children.length - 1; index >= 0; index -= 1) stack.push(children[index] as ScanFrame);
    }
  } catch {
    // A value that throws when read (a hostile getter, a revoked proxy) ends the walk; what was found stands.
  }
  return found;
}

/** Reads a string or number where it sits, adding the place to `found` where it has a sign. */
function readLeaf(frame: ScanFrame, found: SpecSecret[]): void {
  if (typeof frame.value !== "string" && typeof frame.value !== "number") return;
  const sign = stringSign(frame);
  if (sign !== undefined) found.push({ path: pathOf(frame), server: frame.server, sign });
}

/**
 * The path of a frame, written out only for a place that is reported: a walk that built every
 * frame's path would write a deep document's long paths over and over.
 */
function pathOf(frame: ScanFrame): string {
  const segments: (string | number)[] = [];
  for (let at: ScanFrame | undefined = frame; at?.up !== undefined; at = at.up) segments.push(at.segment as string | number);
  let path = "";
  for (let index = segments.length - 1; index >= 0; index -= 1) path = joinPath(path, segments[index] as string | number);
  return path;
}

function serverName(entry: unknown, fallback: string): string {
  const name = isPlainObject(entry) ? ownValue(entry, "name") : undefined;
  return typeof name === "string" && name !== "" ? name : fallback;
}

function stringSign(frame: ScanFrame): SecretSign | undefined {
  const text = String(frame.value);
  if (frame.key !== undefined && isCredentialName(frame.key) && substance(text) !== "") return SecretSign.Field;
  if (typeof frame.value !== "string") return undefined;
  if (frame.key === "command") return commandSign(text);
  const sign = urlSign(text) ?? (looksLikeKey(text) ? SecretSign.Value : undefined);
  if (sign !== undefined) return sign;
  // An env var's or a header's value is where a key sits; a UUID there is one unless its name says id.
  const holdsCredentials = frame.parent === "env" || frame.parent === "headers";
  return holdsCredentials && isUuid(text) && !namesAnId(frame.key) ? SecretSign.Value : undefined;
}
