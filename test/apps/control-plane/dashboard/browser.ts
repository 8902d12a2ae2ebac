import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Debian's chromium, driven by playwright-core (no browser download: these machines are offline). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium); .ci/run does`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}

/** Fail a test on a script error in the page, not just on a missing element later. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  return errors;
}

/**
 * How many pixels of a canvas are close to one of `colors` (#rrggbb): drawn series, not just an
 * empty chart with axes and a grid.
 */
export async function countColoredPixels(page: Page, selector: string, colors: string[], tolerance = 40): Promise<number> {
  return page.evaluate(
    ({ selector, colors, tolerance }) => {
      const rgb = colors.map((c) => [1, 3, 5].map((i) => Number.parseInt(c.slice(i, i + 2), 16)));
      let n = 0;
      // Runs in the page; the test project is typed without the DOM library.
      type Canvas = {
        width: number;
        height: number;
        getContext(kind: "2d"): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
      };
      const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<Canvas> } }).document;
      for (const canvas of doc.querySelectorAll(selector)) {
        const ctx = canvas.getContext("2d");
        if (!ctx || canvas.width === 0 || canvas.height === 0) continue;
        const d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        for (let i = 0; i < d.length; i += 4) {
          if (d[i + 3]! < 200) continue;
          if (rgb.some(([r, g, b]) => Math.abs(d[i]! - r!) + Math.abs(d[i + 1]! - g!) + Math.abs(d[i + 2]! - b!) < tolerance)) n++;
        }
      }
      return n;
    },
    { selector, colors, tolerance },
  );
}
