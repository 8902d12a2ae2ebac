import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The embedded database's files hold every line's encrypted key and every result: the owner's alone. */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/**
 * Create the data directory owner-only, or make an existing one so: every directory under it 0700,
 * every file 0600 (PGlite creates its files 0666 whatever the umask; the 0700 directory is what
 * keeps other users out of files it creates later). Symbolic links are left alone (never followed).
 * Returns how many modes had to change.
 */
export function protectDataDir(dir: string): number {
  mkdirSync(dir, { recursive: true, mode: DATA_DIR_MODE });
  let fixed = 0;
  const stack = [dir];
  for (let path = stack.pop(); path !== undefined; path = stack.pop()) {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) continue;
    const want = stat.isDirectory() ? DATA_DIR_MODE : DATA_FILE_MODE;
    if ((stat.mode & 0o777) !== want) {
      chmodSync(path, want);
      fixed++;
    }
    if (stat.isDirectory()) for (const name of readdirSync(path)) stack.push(join(path, name));
  }
  return fixed;
}
