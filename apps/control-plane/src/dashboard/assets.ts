import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export interface Asset {
  body: Buffer;
  type: string;
  /** Content hash: URLs carry it, so browsers may cache an asset for good. */
  hash: string;
}

const require = createRequire(import.meta.url);
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

const FILES: Record<string, { path: string; type: string }> = {
  // uPlot from npm, served by the app: the machines that run linewatch may have no internet.
  "uplot.js": { path: require.resolve("uplot/dist/uPlot.iife.min.js"), type: "text/javascript; charset=utf-8" },
  "uplot.css": { path: require.resolve("uplot/dist/uPlot.min.css"), type: "text/css; charset=utf-8" },
  "dashboard.js": { path: own("dashboard.js"), type: "text/javascript; charset=utf-8" },
  "dashboard.css": { path: own("dashboard.css"), type: "text/css; charset=utf-8" },
};

/** Read once at start-up; a missing file fails the start, not a page view. */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const [name, { path, type }] of Object.entries(FILES)) {
    const body = readFileSync(path);
    assets.set(name, { body, type, hash: createHash("sha256").update(body).digest("hex").slice(0, 12) });
  }
  return assets;
}

export const ASSET_PREFIX = "/dashboard/assets/";

export const assetUrl = (assets: Map<string, Asset>, name: string) => `${ASSET_PREFIX}${name}?v=${assets.get(name)?.hash ?? "0"}`;
