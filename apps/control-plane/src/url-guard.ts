import { isIP } from "node:net";

const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.com",
  "instance-data",
  "instance-data.ec2.internal",
  "169.254.169.254",
  "fd00:ec2::254",
]);

/**
 * Why a base URL must not be probed, or null when it may. Link-local and cloud-metadata
 * addresses would hand an upstream's credentials (or the cloud's) to whoever registers a line.
 */
export function upstreamUrlProblem(baseUrl: string, allowed: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return "must be an http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http(s) URL";
  if (url.username || url.password) return "must not carry credentials; use apiKey or headers";
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (allowed.includes(host)) return null;
  if (METADATA_HOSTS.has(host)) return `${host} is a cloud metadata address (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)`;
  if (isIP(host) === 4 && host.startsWith("169.254.")) return `${host} is link-local (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)`;
  if (isIP(host) === 6 && /^fe[89ab]/.test(host)) return `${host} is link-local (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)`;
  return null;
}
