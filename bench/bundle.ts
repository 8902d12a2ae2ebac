// How a benchmark runs one of the project's TypeScript programs in a child process: as `npm start`
// runs the control plane and the router, bundled by apps/control-plane/build.mjs into a dist/ folder
// next to the file (no tsx loader, no per-closure name bookkeeping), once per file and run; or
// through tsx when a benchmark is asked to (`--tsx`).
import { execFileSync } from "node:child_process";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const built = new Map<string, string>();

/** The node arguments that run `file` (absolute, or relative to the repository). */
export function nodeArgsFor(file: string, opts: { tsx?: boolean } = {}): string[] {
  const abs = resolve(root, file);
  if (opts.tsx) return ["--import", "tsx", abs];
  let out = built.get(abs);
  if (!out) {
    out = join(dirname(abs), "dist", basename(abs).replace(/\.ts$/, ".mjs"));
    execFileSync(process.execPath, [join(root, "apps/control-plane/build.mjs"), abs, out], { cwd: root, stdio: "inherit" });
    built.set(abs, out);
  }
  return [out];
}
