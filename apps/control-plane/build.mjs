// Bundles the control plane into one ES module for `npm start` (dist/main.mjs, not committed).
// Running from a bundle instead of through tsx saves ~80 MB of RSS (tsx's loader, its per-file
// transforms and source maps) and the per-closure name bookkeeping tsx adds (bench/README.md, memory).
// Dependencies stay in node_modules; only linewatch's own TypeScript is bundled.
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const entry = process.argv[2] ?? here("./src/main.ts");
const outfile = process.argv[3] ?? here("./dist/main.mjs");

/**
 * Modules find their files (migrations, shipped probes, dashboard assets, PGlite's initdb script)
 * relative to `import.meta.url`; in a bundle that would be the bundle's URL, so each source file
 * keeps its own.
 */
const ownUrl = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.(ts|mts)$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      return { contents: text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" };
    });
  },
};

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // Every package from npm stays an import of node_modules; the workspace's own packages are bundled.
  plugins: [
    ownUrl,
    {
      name: "npm-external",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith("@linewatch/") ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
  sourcemap: "linked",
  logLevel: "warning",
});
