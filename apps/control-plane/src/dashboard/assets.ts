import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

export interface Asset {
  body: Buffer;
  type: string;
  /** Content hash: URLs carry it, so browsers may cache an asset for good. */
  hash: string;
}

const require = createRequire(import.meta.url);
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

const FILES: Record<string, { body: () => Buffer; type: string }> = {
  // uPlot from npm, served by the app: the machines that run linewatch may have no internet.
  "uplot.js": { body: () => readFileSync(require.resolve("uplot/dist/uPlot.iife.min.js")), type: JS },
  "uplot.css": { body: () => readFileSync(require.resolve("uplot/dist/uPlot.min.css")), type: CSS },
  "dashboard.js": { body: buildClient, type: JS },
  "dashboard.css": { body: () => readFileSync(own("dashboard.css")), type: CSS },
};

/**
 * The browser script: client/dashboard.ts and what it imports (the server's formatters, core's
 * constants) bundled into one file, as the browser runs it.
 */
function buildClient(): Buffer {
  const out = buildSync({
    entryPoints: [fileURLToPath(new URL("./client/dashboard.ts", import.meta.url))],
    bundle: true,
    write: false,
    format: "iife",
    target: "es2022",
    platform: "browser",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  const file = out.outputFiles[0];
  if (!file) throw new Error("esbuild wrote no dashboard script");
  return Buffer.from(file.contents);
}

let loaded: Map<string, Asset> | null = null;

/** Read (and the script built) once per process, when the dashboard is first asked for. */
export function loadAssets(): Map<string, Asset> {
  if (loaded) return loaded;
  const assets = new Map<string, Asset>();
  for (const [name, { body: read, type }] of Object.entries(FILES)) {
    const body = read();
    assets.set(name, { body, type, hash: createHash("sha256").update(body).digest("hex").slice(0, 12) });
  }
  loaded = assets;
  return assets;
}

export const ASSET_PREFIX = "/dashboard/assets/";

export const assetUrl = (assets: Map<string, Asset>, name: string) => `${ASSET_PREFIX}${name}?v=${assets.get(name)?.hash ?? "0"}`;
