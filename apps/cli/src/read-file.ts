import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseDocument } from "yaml";
import { InvalidInput } from "./errors";

/** Read a YAML (or JSON: YAML is a superset) file; `-` is standard input. Errors name the file and line. */
export function readDataFile(path: string, cwd: string): unknown {
  let text: string;
  try {
    text = path === "-" ? readFileSync(0, "utf8") : readFileSync(resolve(cwd, path), "utf8");
  } catch (error) {
    throw new InvalidInput(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) throw new InvalidInput(`${path}: ${problem.message.split("\n")[0]}`);
  return doc.toJS() ?? {};
}
