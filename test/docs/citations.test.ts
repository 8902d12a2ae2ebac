// Comments, docs and deploy files cite the product's docs as `docs/health.md#cooldown`, and the docs
// link each other as `(health.md#cooldown)`: every such citation must name a page of docs/ and one
// of its `##` headings (as GitHub makes an anchor of it), so renaming a heading breaks this test, not
// the reader's way.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const DOCS = join(root, "docs");

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

const pages = new Map(
  readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => [f, new Set([...readFileSync(join(DOCS, f), "utf8").matchAll(/^##+ (.+)$/gm)].map((m) => anchorOf(m[1] as string)))]),
);

const SOURCES = ["apps", "packages", "test", "bench", "docs", "deploy"];
const SKIP = new Set(["node_modules", "dist", ".vendor", ".linewatch"]);

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(ts|tsx|mts|mjs|js|md|ya?ml|json)$/.test(entry.name)) yield path;
  }
}

function citations(): { where: string; page: string; anchor: string | null }[] {
  const found: { where: string; page: string; anchor: string | null }[] = [];
  const all = [join(root, "README.md"), ...SOURCES.flatMap((s) => [...files(join(root, s))])];
  for (const path of all) {
    const text = readFileSync(path, "utf8");
    const inDocs = path.startsWith(DOCS);
    const pattern = inDocs ? /\]\(([a-z-]+\.md)(?:#([a-z0-9-]+))?\)/g : /\bdocs\/([a-z-]+\.md)(?:#([a-z0-9-]+))?/g;
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split("\n").length;
      found.push({ where: `${relative(root, path)}:${line}`, page: m[1] as string, anchor: m[2] ?? null });
    }
  }
  return found;
}

describe("docs citations", () => {
  it("the docs pages exist, with their headings", () => {
    for (const page of [
      "README.md",
      "api.md",
      "scoring.md",
      "health.md",
      "tables.md",
      "roles.md",
      "router.md",
      "live-evidence.md",
      "replay.md",
      "alerts.md",
    ])
      expect(pages.get(page)?.size, page).toBeGreaterThan(0);
    expect(anchorOf("Confirming re-probes")).toBe("confirming-re-probes");
    expect(anchorOf("What a replay cannot know")).toBe("what-a-replay-cannot-know");
  });

  it("every citation names a page of docs/ and one of its headings", () => {
    const found = citations();
    expect(found.length).toBeGreaterThan(20);
    const broken = found.filter((c) => !pages.has(c.page) || (c.anchor !== null && !pages.get(c.page)?.has(c.anchor)));
    expect(broken.map((c) => `${c.where}: ${c.page}${c.anchor ? `#${c.anchor}` : ""}`)).toEqual([]);
  });

  it("nothing cites the spec by section: it is not in the repository, its content is docs/", () => {
    const cites = [join(root, "README.md"), ...SOURCES.flatMap((s) => [...files(join(root, s))])].flatMap((path) =>
      [...readFileSync(path, "utf8").matchAll(/SPEC §\d+/g)].map((m) => `${relative(root, path)}: ${m[0]}`),
    );
    expect(cites).toEqual([]);
  });
});
