// `initdb` for an embedded PGlite data directory, run by createDb in a process of its own: PGlite's
// initdb holds two PostgreSQL heaps and a copy of one at once (~800 MB), and a process keeps its
// high-water mark and most of that memory after it is done. Here it is returned when this exits.
//
//   node pglite-initdb.mjs DATA_DIR SETTINGS_JSON     (SETTINGS_JSON: ["shared_buffers=16MB", …])
import { PGlite } from "@electric-sql/pglite";

const [dataDir, settingsJson] = process.argv.slice(2);
if (!dataDir || !settingsJson) {
  process.stderr.write("usage: node pglite-initdb.mjs DATA_DIR SETTINGS_JSON\n");
  process.exit(2);
}
const flags = JSON.parse(settingsJson).flatMap((setting) => ["-c", setting]);
// -c for initdb writes the settings into postgresql.conf as well as using them while it runs.
try {
  const pg = await PGlite.create(dataDir, { initDbStartParams: flags, startParams: [...PGlite.defaultStartParams, ...flags] });
  await pg.close();
} catch (error) {
  // PGlite's file errors are Emscripten's: an errno and no message.
  const errno = error?.errno === undefined ? "" : ` (errno ${error.errno}${error.errno === 54 ? ": not a directory" : ""})`;
  process.stderr.write(`initdb failed: ${error?.message || error?.name || String(error)}${errno}\n`);
  process.exit(1);
}
