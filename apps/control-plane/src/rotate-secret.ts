// npm run rotate-secret [-- --dry-run] [-- --write-key-file]
//
// Re-encrypts every line's upstream API key and header values, and every webhook sink's signing
// secret, with LINEWATCH_SECRET_KEY. Keys sealed with
// LINEWATCH_SECRET_KEY_PREVIOUS are opened with it; afterwards the previous key is no longer needed.
// Safe while replicas run on PostgreSQL (each row is swapped only if it did not change meanwhile);
// with the embedded database, stop the control plane first (PGlite is one process's).
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import {
  createDb,
  type Db,
  listLineRows,
  listWebhooks,
  replaceLineApiKeyEnc,
  replaceLineHeadersEnc,
  replaceWebhookSecretEnc,
} from "@linewatch/db";
import { loadConfig } from "./config";
import { createSecretBox, SECRET_KEY_FILE, type SecretBox } from "./secrets";

export interface RotationReport {
  /** Lines that hold a key. */
  withKey: number;
  /** Names of the lines re-encrypted now. */
  rotated: string[];
  /** Already sealed with the current key. */
  current: number;
  /** Lines whose key neither key opens: they need a new key through PATCH /v1/lines/:id. */
  failed: { line: string; error: string }[];
}

/**
 * Re-seal every line key not sealed with the current key. A row changed by the API between read
 * and write is read again (a few passes at most); a key that cannot be opened is reported, not lost.
 */
export async function rotateLineKeys(db: Db, secrets: SecretBox, opts: { dryRun?: boolean } = {}): Promise<RotationReport> {
  const rotated = new Set<string>();
  for (let pass = 0; ; pass++) {
    const report: RotationReport = { withKey: 0, rotated: [], current: 0, failed: [] };
    let raced = false;
    for (const { row } of await listLineRows(db)) {
      if (!row.apiKeyEnc) continue;
      report.withKey++;
      if (secrets.isCurrent(row.apiKeyEnc)) {
        if (!rotated.has(row.name)) report.current++;
        continue;
      }
      let plain: string;
      try {
        plain = secrets.decrypt(row.apiKeyEnc);
      } catch (error) {
        report.failed.push({ line: row.name, error: error instanceof Error ? error.message : String(error) });
        continue;
      }
      if (opts.dryRun || (await replaceLineApiKeyEnc(db, row.id, row.apiKeyEnc, secrets.encrypt(plain)))) rotated.add(row.name);
      else raced = true;
    }
    // Header values are sealed like keys (line-headers.ts): re-sealed the same way.
    for (const { row } of await listLineRows(db)) {
      if (!row.headersEnc || secrets.isCurrent(row.headersEnc)) continue;
      let plain: string;
      try {
        plain = secrets.decrypt(row.headersEnc);
      } catch (error) {
        report.failed.push({ line: row.name, error: `headers: ${error instanceof Error ? error.message : String(error)}` });
        continue;
      }
      const next = { headers: row.headers as Record<string, boolean>, headersEnc: secrets.encrypt(plain) };
      if (opts.dryRun || (await replaceLineHeadersEnc(db, row.id, row, next))) rotated.add(row.name);
      else raced = true;
    }
    if (!raced || pass === 4) return { ...report, rotated: [...rotated].sort() };
  }
}

/** What rotating the webhook sinks' signing secrets did (as RotationReport, per sink). */
export interface WebhookRotationReport {
  withSecret: number;
  rotated: string[];
  current: number;
  failed: { webhook: string; error: string }[];
}

/** Re-seal every webhook signing secret not sealed with the current key, as rotateLineKeys does keys. */
export async function rotateWebhookSecrets(db: Db, secrets: SecretBox, opts: { dryRun?: boolean } = {}): Promise<WebhookRotationReport> {
  const rotated = new Set<string>();
  for (let pass = 0; ; pass++) {
    const report: WebhookRotationReport = { withSecret: 0, rotated: [], current: 0, failed: [] };
    let raced = false;
    for (const row of await listWebhooks(db)) {
      report.withSecret++;
      if (secrets.isCurrent(row.secretEnc)) {
        if (!rotated.has(row.name)) report.current++;
        continue;
      }
      let plain: string;
      try {
        plain = secrets.decrypt(row.secretEnc);
      } catch (error) {
        report.failed.push({ webhook: row.name, error: error instanceof Error ? error.message : String(error) });
        continue;
      }
      if (opts.dryRun || (await replaceWebhookSecretEnc(db, row.id, row.secretEnc, secrets.encrypt(plain)))) rotated.add(row.name);
      else raced = true;
    }
    if (!raced || pass === 4) return { ...report, rotated: [...rotated].sort() };
  }
}

/** The current key: LINEWATCH_SECRET_KEY, else the embedded default's key file (never created here). */
function currentKey(secretKey: string | undefined, dataDir: string): string {
  if (secretKey) return secretKey;
  const file = join(dataDir, SECRET_KEY_FILE);
  if (!existsSync(file)) throw new Error(`set LINEWATCH_SECRET_KEY to the new key (no ${file} either)`);
  return readFileSync(file, "utf8").trim();
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { "dry-run": { type: "boolean", default: false }, "write-key-file": { type: "boolean", default: false } },
  });
  const config = loadConfig(process.env);
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const secrets = createSecretBox(currentKey(config.secretKey, config.dataDir), config.secretKeyPrevious);
  const database = await createDb({ url: config.databaseUrl, dataDir: config.dataDir });
  try {
    const report = await rotateLineKeys(database.db, secrets, { dryRun: values["dry-run"] ?? false });
    const verb = values["dry-run"] ? "would re-encrypt" : "re-encrypted";
    out(
      `${report.withKey} line key(s): ${verb} ${report.rotated.length}, ${report.current} already on the current key, ${report.failed.length} unreadable`,
    );
    for (const name of report.rotated) out(`  ${verb}: ${name}`);
    for (const f of report.failed)
      out(`  UNREADABLE: ${f.line} (${f.error}); set LINEWATCH_SECRET_KEY_PREVIOUS to the key it was sealed with, or PATCH a new apiKey`);
    const hooks = await rotateWebhookSecrets(database.db, secrets, { dryRun: values["dry-run"] ?? false });
    out(
      `${hooks.withSecret} webhook secret(s): ${verb} ${hooks.rotated.length}, ${hooks.current} already on the current key, ${hooks.failed.length} unreadable`,
    );
    for (const name of hooks.rotated) out(`  ${verb}: webhook ${name}`);
    for (const f of hooks.failed)
      out(
        `  UNREADABLE: webhook ${f.webhook} (${f.error}); set LINEWATCH_SECRET_KEY_PREVIOUS to the key it was sealed with, or PATCH a new secret`,
      );
    const failures = report.failed.length + hooks.failed.length;
    if (values["write-key-file"] && !values["dry-run"] && failures === 0) {
      if (!config.secretKey) throw new Error("--write-key-file needs LINEWATCH_SECRET_KEY (the key to write)");
      const file = join(config.dataDir, SECRET_KEY_FILE);
      writeFileSync(`${file}.new`, `${config.secretKey.trim()}\n`, { mode: 0o600 });
      renameSync(`${file}.new`, file);
      out(`  wrote the new key to ${file}`);
    }
    if (failures === 0 && !values["dry-run"])
      out("done: LINEWATCH_SECRET_KEY_PREVIOUS can be removed once every replica runs with the new key");
    return failures === 0 ? 0 : 1;
  } finally {
    await database.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`rotate-secret: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(2);
    },
  );
}
