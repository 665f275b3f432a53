/**
 * Generates llms.txt: every public export with the first sentence of its own doc comment,
 * grouped by module in the order src/index.ts exports them, then the other entry points.
 *
 * `npm run llms` writes the file; `npm run llms -- --check` exits 1 when the committed copy
 * differs from what would be written. An export without a doc comment fails the run, named.
 */
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, resolve, basename } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const output = resolve(root, "llms.txt");

interface Entry {
  file: string;
  title: string;
}

const entries: Entry[] = [
  { file: "src/index.ts", title: "@cubicecho/agent-core" },
  { file: "src/spec.ts", title: "@cubicecho/agent-core/spec" },
  { file: "src/testing.ts", title: "@cubicecho/agent-core/testing" },
  { file: "src/mcp.ts", title: "@cubicecho/agent-core/mcp" },
  { file: "src/otel.ts", title: "@cubicecho/agent-core/otel" },
  { file: "src/redis.ts", title: "@cubicecho/agent-core/redis" },
].filter((entry) => existsSync(resolve(root, entry.file)));

const program = ts.createProgram(
  entries.map((entry) => resolve(root, entry.file)),
  {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
);
const checker = program.getTypeChecker();

/** The first sentence of a doc comment's first paragraph, on one line. */
function firstSentence(doc: string): string {
  const paragraph = doc.split(/\n\s*\n/)[0] ?? "";
  // A link the compiler could not resolve from the declaring file renders as `{@link name }`.
  const flat = paragraph
    .replace(/\s+/g, " ")
    .replace(/\{@link (\S+) \}/g, "{@link $1}")
    .trim();
  const match = /^(.+?[.!?])(?:\s|$)/.exec(flat);
  return (match ? match[1] : flat) ?? "";
}

function kindOf(symbol: ts.Symbol): string {
  const flags = symbol.flags;
  if (flags & ts.SymbolFlags.Class) return "class";
  if (flags & ts.SymbolFlags.Function) return "function";
  if (flags & ts.SymbolFlags.Interface) return "interface";
  if (flags & ts.SymbolFlags.TypeAlias && flags & ts.SymbolFlags.Variable) return "const";
  if (flags & ts.SymbolFlags.TypeAlias) return "type";
  if (flags & ts.SymbolFlags.Enum) return "enum";
  if (flags & ts.SymbolFlags.Variable) return "const";
  return "export";
}

function resolveSymbol(symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function docOf(symbol: ts.Symbol): string {
  const target = resolveSymbol(symbol);
  const text = ts.displayPartsToString(target.getDocumentationComment(checker)).trim();
  if (text) return text;
  // A const and a type of the same name (FinishReason): either declaration's comment counts.
  for (const declaration of target.declarations ?? []) {
    const tags = ts.getJSDocCommentsAndTags(declaration);
    for (const tag of tags) {
      if (ts.isJSDoc(tag) && typeof tag.comment === "string" && tag.comment.trim()) return tag.comment.trim();
    }
  }
  return "";
}

/**
 * The public module a re-export comes from: the name its file's `@module` tag gives. A helper
 * (its tag names a path inside a layer folder) belongs to the entry that re-exports it.
 */
function moduleOf(entryFile: string, specifier: string, own: string): string {
  const file = resolve(root, dirname(entryFile), specifier.replace(/\.js$/, ".ts"));
  const tag = /@module\s+(\S+)/.exec(existsSync(file) ? readFileSync(file, "utf8") : "")?.[1];
  return tag && !tag.includes("/") ? tag : own;
}

interface Group {
  module: string;
  lines: string[];
}

const missing: string[] = [];

function groupsOf(entry: Entry): Group[] {
  const source = program.getSourceFile(resolve(root, entry.file));
  if (!source) throw new Error(`cannot read ${entry.file}`);
  const groups: Group[] = [];
  const groupFor = (module: string): Group => {
    const last = groups[groups.length - 1];
    if (last && last.module === module) return last;
    const group = { module, lines: [] };
    groups.push(group);
    return group;
  };
  const seen = new Set<string>();
  const own = basename(entry.file, ".ts");
  const add = (module: string, name: string, symbol: ts.Symbol | undefined) => {
    if (!symbol || seen.has(name)) return;
    seen.add(name);
    const doc = docOf(symbol);
    if (!doc) missing.push(`${entry.file}: ${name}`);
    groupFor(module).lines.push(`- \`${name}\` (${kindOf(resolveSymbol(symbol))}): ${firstSentence(doc)}`);
  };
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const module = moduleOf(entry.file, statement.moduleSpecifier.text, own);
      const clause = statement.exportClause;
      if (!clause || !ts.isNamedExports(clause)) {
        throw new Error(`${entry.file}: use explicit named re-exports, not export * from "${statement.moduleSpecifier.text}"`);
      }
      for (const element of clause.elements) add(module, element.name.text, checker.getSymbolAtLocation(element.name));
      continue;
    }
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (!modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) add(own, declaration.name.text, checker.getSymbolAtLocation(declaration.name));
      }
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      add(own, statement.name.text, checker.getSymbolAtLocation(statement.name));
    }
  }
  return groups;
}

function render(): string {
  const out: string[] = [
    "# @cubicecho/agent-core",
    "",
    "> The endpoint-agnostic half of an OpenAI-compatible agent loop: tool-schema compatibility, negotiation of what an endpoint or a model refuses, streamed turns, on-demand tool loading, side tasks, run events and a pooled client.",
    "",
    "Every public export with the first sentence of its doc comment, grouped by module. Generated from the entry points by `npm run llms`; do not edit by hand.",
    "",
  ];
  for (const entry of entries) {
    out.push(`## ${entry.title}`, "");
    for (const group of groupsOf(entry)) {
      out.push(`### ${group.module}`, "", ...group.lines, "");
    }
  }
  return `${out.join("\n").trimEnd()}\n`;
}

const text = render();
if (missing.length > 0) {
  console.error(`llms: these exports have no doc comment:\n  ${missing.join("\n  ")}`);
  process.exit(1);
}
if (process.argv.includes("--check")) {
  const current = existsSync(output) ? readFileSync(output, "utf8") : "";
  if (current !== text) {
    console.error("llms: llms.txt is out of date with the exports; run `npm run llms` and commit it.");
    process.exit(1);
  }
  console.log("llms: llms.txt is up to date.");
} else {
  writeFileSync(output, text);
  console.log(`llms: wrote llms.txt (${text.split("\n").filter((line) => line.startsWith("- ")).length} exports).`);
}
