/**
 * @module catalog
 * The name-only shape tool loading reads a connected tool server as.
 */

/** One tool as a catalogue lists it: a name and a one-line description, never its schema. */
export interface CatalogTool {
  /** The tool's name, as a request would declare it. */
  name: string;
  /** One line saying what the tool does. */
  description?: string | undefined;
}

/** A connected tool server as the catalogue sees it: a name, a label, and its tools by name. */
export interface CatalogServer {
  /** The server's name (an MCP server's configured name). */
  name: string;
  /** A short human label for the server, read by keyword preselection beside the tool's own words. */
  label?: string | undefined;
  /** The server's tools, name and one line each. */
  tools: CatalogTool[];
}
