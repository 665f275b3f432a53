/**
 * @module cli/demo-tools
 * The two real tools `agent-core demo` hands its model: one lists the files of a folder under a
 * root it will not leave, the other evaluates arithmetic with a small parser (never `eval`).
 */
import { readdir } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { AgentCoreError, type ToolCallRequest, type ToolDefinition } from "../index.js";

/** The demo's tool declarations, as a request sends them. */
export const DEMO_TOOLS: readonly ToolDefinition[] = Object.freeze([
  {
    type: "function",
    function: {
      name: "list_files",
      description: "Lists the files and folders in a folder of the project, one per line; folders end in a slash.",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: 'The folder, relative to the project root; "." is the root.' } },
        required: ["path"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "calculate",
      description: "Evaluates an arithmetic expression with + - * / % ^ and parentheses, and returns the number.",
      parameters: {
        type: "object",
        properties: { expression: { type: "string", description: "The expression, for example (12 * 2.5) + 4." } },
        required: ["expression"],
      },
    },
  },
] satisfies ToolDefinition[]);

/** The most entries list_files returns. */
const MAX_ENTRIES = 200;

/** Lists a folder under `root`, refusing any path that leaves it. */
export async function listFiles(root: string, path: unknown): Promise<string> {
  const asked = typeof path === "string" && path.trim() !== "" ? path.trim() : ".";
  const target = resolve(root, asked);
  const inside = relative(root, target);
  if (inside.startsWith("..") || isAbsolute(inside)) throw new Error(`"${asked}" is outside the project folder.`);
  const entries = await readdir(target, { withFileTypes: true });
  const names = entries
    .filter((entry) => !entry.name.startsWith("."))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = names.slice(0, MAX_ENTRIES);
  const more = names.length > shown.length ? `\n… and ${names.length - shown.length} more` : "";
  return `${shown.join("\n")}${more}`;
}

/** An arithmetic expression that could not be read or evaluated. */
export class ArithmeticError extends AgentCoreError {
  override readonly name = "ArithmeticError" as const;

  static {
    AgentCoreError.mark(this, "ArithmeticError");
  }

  /** Makes the error with the sentence the tool answers the model with. */
  constructor(message: string) {
    super({ message });
  }

  /** Tells an ArithmeticError from anything else, also one from another copy of this package. */
  static override is(value: unknown): value is ArithmeticError {
    return AgentCoreError.isNamed(value, "ArithmeticError");
  }
}

/**
 * Evaluates arithmetic: numbers, `+ - * / %`, `^` (power, right-associative), unary minus and
 * parentheses. Anything else is an {@link ArithmeticError}; nothing is ever handed to `eval`.
 */
export function evaluateArithmetic(expression: string): number {
  const text = String(expression);
  if (text.length > 500) throw new ArithmeticError("The expression is longer than 500 characters.");
  let at = 0;
  let depth = 0;
  const skip = (): void => {
    while (at < text.length && /\s/.test(text[at] as string)) at += 1;
  };
  const peek = (): string => {
    skip();
    return text[at] ?? "";
  };
  const fail = (what: string): never => {
    throw new ArithmeticError(`${what} at position ${at + 1} of "${text}".`);
  };
  const primary = (): number => {
    const next = peek();
    if (next === "(") {
      at += 1;
      depth += 1;
      if (depth > 64) fail("Too many nested parentheses");
      const value = sum();
      if (peek() !== ")") fail("A closing parenthesis is missing");
      at += 1;
      depth -= 1;
      return value;
    }
    if (next === "-" || next === "+") {
      at += 1;
      const value = power();
      return next === "-" ? -value : value;
    }
    const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?/i.exec(text.slice(at));
    if (!match) return fail(next === "" ? "The expression ends early" : `Unexpected "${next}"`);
    at += match[0].length;
    return Number(match[0]);
  };
  const power = (): number => {
    const base = primary();
    if (peek() === "^") {
      at += 1;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let value = power();
    for (let op = peek(); op === "*" || op === "/" || op === "%"; op = peek()) {
      at += 1;
      const right = power();
      if ((op === "/" || op === "%") && right === 0) fail("Division by zero");
      value = op === "*" ? value * right : op === "/" ? value / right : value % right;
    }
    return value;
  };
  const sum = (): number => {
    let value = product();
    for (let op = peek(); op === "+" || op === "-"; op = peek()) {
      at += 1;
      const right = product();
      value = op === "+" ? value + right : value - right;
    }
    return value;
  };
  const value = sum();
  if (peek() !== "") fail(`Unexpected "${peek()}"`);
  if (!Number.isFinite(value)) throw new ArithmeticError(`"${text}" does not come to a finite number.`);
  return value;
}

/** Builds the demo's dispatch: runs list_files under `root` and calculate, and refuses any other name. */
export function demoDispatch(root: string): (request: ToolCallRequest) => Promise<string> {
  return async (request) => {
    if (request.name === "list_files") return listFiles(root, request.args.path);
    if (request.name === "calculate") {
      const value = evaluateArithmetic(String(request.args.expression ?? ""));
      return String(Number.isInteger(value) ? value : Number(value.toPrecision(12)));
    }
    throw new Error(`There is no tool named "${request.name}".`);
  };
}
