// Bundles the control plane into one ES module for `npm start` (dist/main.mjs, not committed).
// Running from a bundle instead of through tsx saves ~80 MB of RSS (tsx's loader, its per-file
// transforms and source maps) and the per-closure name bookkeeping tsx adds (bench/README.md, memory).
// Dependencies stay in node_modules; only linewatch's own TypeScript is bundled.
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
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

/**
 * Worker threads the control plane starts are bundled next to it (`<name>.<worker>.mjs`), and the
 * main bundle names them in `globalThis.__linewatchWorkers`: a bundled file's import.meta.url is
 * its source file's, so it could not find them itself.
 */
const isControlPlane = resolve(entry) === here("./src/main.ts");
const workers = isControlPlane ? { "replay-worker": here("./src/replay/replay-worker.ts") } : {};
const base = outfile.replace(/\.mjs$/, "");
const banner = Object.keys(workers)
  .map(
    (w) =>
      `(globalThis.__linewatchWorkers ??= {})[${JSON.stringify(w)}] = new URL(${JSON.stringify(`./${basename(base)}.${w}.mjs`)}, import.meta.url).href;`,
  )
  .join("\n");

const options = {
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
};

await Promise.all([
  build({ ...options, entryPoints: [entry], outfile, ...(banner ? { banner: { js: banner } } : {}) }),
  ...Object.entries(workers).map(([w, source]) => build({ ...options, entryPoints: [source], outfile: `${base}.${w}.mjs` })),
]);
