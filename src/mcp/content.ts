/**
 * @module mcp/content
 * What an MCP tool's answer comes to as the text of a tool message: each content block as text
 * a model can read, binary data described rather than pasted, and `isError` kept.
 */

/** An MCP tool result read as a tool message: the text the model reads and whether the tool succeeded. */
export interface McpResultText {
  /** False where the server set `isError`. */
  ok: boolean;
  /** The content blocks as text, one after another. */
  text: string;
}

type Part = Record<string, unknown>;

function isRecord(value: unknown): value is Part {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The size of base64 data, said in bytes or kB. */
function sizeOf(data: unknown): string {
  if (typeof data !== "string") return "no data";
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  const bytes = Math.max(0, Math.floor((data.length * 3) / 4) - padding);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} kB`;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function resourceText(resource: unknown): string {
  if (!isRecord(resource)) return "[resource]";
  const uri = str(resource.uri) ?? "(no uri)";
  const mime = str(resource.mimeType);
  const head = `[resource ${uri}${mime ? ` (${mime})` : ""}]`;
  if (typeof resource.text === "string") return `${head}\n${resource.text}`;
  if (typeof resource.blob === "string") return `${head} ${sizeOf(resource.blob)} of binary data, not shown`;
  return head;
}

/** One content block as text. */
function blockText(block: unknown): string {
  if (!isRecord(block)) return json(block);
  switch (block.type) {
    case "text":
      return typeof block.text === "string" ? block.text : "";
    case "image":
    case "audio":
      return `[${block.type}${str(block.mimeType) ? ` ${block.mimeType as string}` : ""}, ${sizeOf(block.data)}, not shown]`;
    case "resource":
      return resourceText(block.resource);
    case "resource_link": {
      const name = str(block.title) ?? str(block.name) ?? "resource";
      const mime = str(block.mimeType);
      const description = str(block.description);
      return `[resource link] ${name} <${str(block.uri) ?? "(no uri)"}>${mime ? ` (${mime})` : ""}${description ? `: ${description}` : ""}`;
    }
    default: {
      // A block of a kind this package does not know: its fields, without any bulky data.
      const { data: _data, blob: _blob, ...rest } = block;
      return json(rest);
    }
  }
}

/**
 * Reads an MCP `tools/call` result as the text a tool message carries, and whether it succeeded.
 *
 * Text blocks are their text; an image or audio block is a line naming its type and size (a tool
 * message cannot carry it); an embedded resource is its URI and text, or its size where it is
 * binary; a resource link is its name, URI and description. Blocks are joined with a newline.
 * With no content, `structuredContent` is its JSON, and a result from an older server
 * (`toolResult`) is that value's text or JSON. `ok` is false where the server set `isError`.
 *
 * @param result - What `client.callTool` resolved to.
 */
export function readMcpResult(result: unknown): McpResultText {
  if (!isRecord(result)) return { ok: true, text: typeof result === "string" ? result : result === undefined || result === null ? "" : json(result) };
  const ok = result.isError !== true;
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length > 0) return { ok, text: content.map(blockText).join("\n") };
  if (result.structuredContent !== undefined) return { ok, text: json(result.structuredContent) };
  if ("toolResult" in result) return { ok, text: typeof result.toolResult === "string" ? result.toolResult : json(result.toolResult) };
  return { ok, text: "" };
}
