import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";

/**
 * Upstream URL guard. A line's `baseUrl` is where the control plane sends probes with the line's
 * key, so whoever may register a line must not be able to point it at the cloud's metadata service
 * (169.254.169.254 hands out instance credentials) or anything else link-local. Loopback and private
 * networks stay allowed: a self-hosted model on 10.x or 127.0.0.1 is an ordinary upstream.
 *
 * `LINEWATCH_ALLOW_UPSTREAM_HOSTS` lists exceptions: host names, addresses or CIDRs.
 */

/** Names of cloud metadata services (AWS, GCP, Azure, Alibaba, Tencent, OpenStack). */
const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.com",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "metadata.platformequinix.com",
]);

/** Metadata addresses outside the link-local ranges. */
const METADATA_ADDRESSES: [string, "ipv4" | "ipv6"][] = [
  ["fd00:ec2::254", "ipv6"], // AWS IMDS over IPv6
  ["100.100.100.200", "ipv4"], // Alibaba Cloud
  ["192.0.0.192", "ipv4"], // Oracle Cloud (classic)
];

const metadata = new BlockList();
for (const [address, type] of METADATA_ADDRESSES) metadata.addAddress(address, type);
metadata.addAddress("169.254.169.254", "ipv4"); // AWS, GCP, Azure, DigitalOcean, OpenStack…
metadata.addAddress("169.254.170.2", "ipv4"); // ECS task metadata
const linkLocal = new BlockList();
linkLocal.addSubnet("169.254.0.0", 16, "ipv4");
linkLocal.addSubnet("fe80::", 10, "ipv6");

const family = (address: string): "ipv4" | "ipv6" | null => {
  const v = isIP(address);
  return v === 4 ? "ipv4" : v === 6 ? "ipv6" : null;
};

/** `[::1]` → `::1`, `Metadata.Google.Internal.` → `metadata.google.internal`. */
const normalizeHost = (host: string) =>
  host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();

/** Why an allow-list entry is unusable, or null. Config validation calls it for each entry. */
export function allowEntryProblem(entry: string): string | null {
  if (entry.includes("://")) return "not a host name, address or CIDR (a URL)";
  const slash = entry.indexOf("/");
  if (slash === -1) {
    if (family(normalizeHost(entry))) return null;
    return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry) ? null : "not a host name, address or CIDR";
  }
  const type = family(entry.slice(0, slash));
  const prefix = Number(entry.slice(slash + 1));
  if (!type) return "a CIDR must start with an IPv4 or IPv6 address";
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > (type === "ipv4" ? 32 : 128)) return "bad CIDR prefix length";
  return null;
}

export interface UpstreamAllowList {
  names: Set<string>;
  addresses: BlockList;
}

const compiled = new WeakMap<readonly string[], UpstreamAllowList>();

/** Entries → names and address ranges (compiled once per config array). */
export function compileAllowList(allowed: readonly string[]): UpstreamAllowList {
  const hit = compiled.get(allowed);
  if (hit) return hit;
  const list: UpstreamAllowList = { names: new Set(), addresses: new BlockList() };
  for (const raw of allowed) {
    const entry = raw.trim();
    if (!entry || allowEntryProblem(entry)) continue;
    const slash = entry.indexOf("/");
    if (slash !== -1) {
      const net = entry.slice(0, slash);
      const netType = family(net); // allowEntryProblem passed the entry: an address before the slash
      if (netType) list.addresses.addSubnet(net, Number(entry.slice(slash + 1)), netType);
      continue;
    }
    const host = normalizeHost(entry);
    const type = family(host);
    if (type) list.addresses.addAddress(host, type);
    else list.names.add(host);
  }
  compiled.set(allowed, list);
  return list;
}

/** Why this resolved (or literal) address may not be probed, or null. */
export function addressProblem(address: string, allow: UpstreamAllowList): string | null {
  const type = family(address);
  if (!type) return null;
  if (allow.addresses.check(address, type)) return null;
  if (metadata.check(address, type)) return `${address} is a cloud metadata address`;
  if (linkLocal.check(address, type)) return `${address} is link-local`;
  return null;
}

/**
 * Why a base URL must not be probed, or null when it may: http(s) only, no credentials in the URL,
 * no metadata host name, no link-local or metadata address (IPv4-mapped IPv6 included).
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
  const allow = compileAllowList(allowed);
  const host = normalizeHost(url.hostname);
  if (allow.names.has(host)) return null;
  const hint = " (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)";
  if (METADATA_HOSTS.has(host)) return `${host} is a cloud metadata address${hint}`;
  const problem = addressProblem(host, allow);
  return problem ? problem + hint : null;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type BaseLookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export class UpstreamAddressError extends Error {
  readonly code = "ELINEWATCHBLOCKED";
}

/**
 * A `lookup` for the prober's undici agent (`connect: { lookup }`): a host *name* whose addresses
 * include a link-local or metadata one is refused before any connection is made, so a DNS name
 * (or a rebinding one) cannot reach what a literal address may not. Every address of the name is
 * checked, not only the one picked. Literal addresses never reach a lookup; the API refuses those.
 */
export function createGuardedLookup(allowed: readonly string[], base: BaseLookup = dnsLookup as unknown as BaseLookup) {
  const allow = compileAllowList(allowed);
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    base(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, options.all ? [] : "");
      const host = normalizeHost(hostname);
      if (!allow.names.has(host)) {
        const bad = METADATA_HOSTS.has(host)
          ? `${host} is a cloud metadata host`
          : addresses.map((a) => addressProblem(a.address, allow)).find((p) => p !== null);
        if (bad) {
          return callback(
            new UpstreamAddressError(`upstream ${hostname} refused: ${bad} (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)`),
            options.all ? [] : "",
          );
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND" }), "");
      callback(null, first.address, first.family);
    });
  };
}
