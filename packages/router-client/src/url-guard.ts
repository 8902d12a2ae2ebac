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

/** An IPv6 address as 8 groups of 16 bits (`::` expanded, a trailing dotted quad read as two groups), or null. */
export function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.replace(/%.*$/, ""); // a zone id (fe80::1%eth0) names no bits
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

const quadOf = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * The IPv4 addresses an IPv6 address carries, each of which the network may deliver to: mapped
 * (::ffff:a.b.c.d), compatible (::a.b.c.d, deprecated but still routed by some stacks), NAT64's
 * well-known prefix (64:ff9b::/96), 6to4 (2002:AABB:CCDD::/48) and Teredo (2001:0::/32, the server
 * in bits 32–63 and the client, inverted, in the last 32 bits). Empty for anything else.
 */
export function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address);
  if (!g) return [];
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g5 === 0xffff) return [quadOf(g6, g7)]; // mapped
  if (zeroTo(6) && (g6 !== 0 || g7 > 1)) return [quadOf(g6, g7)]; // compatible (not :: or ::1)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [quadOf(g6, g7)]; // NAT64
  if (g0 === 0x2002) return [quadOf(g1, g2)]; // 6to4
  if (g0 === 0x2001 && g1 === 0) return [quadOf(g2, g3), quadOf(g6 ^ 0xffff, g7 ^ 0xffff)]; // Teredo
  return [];
}

/** Why this resolved (or literal) address may not be probed, or null. An IPv6 address is checked with the IPv4 ones it carries. */
export function addressProblem(address: string, allow: UpstreamAllowList): string | null {
  const type = family(address);
  if (!type) return null;
  if (allow.addresses.check(address, type)) return null;
  if (metadata.check(address, type)) return `${address} is a cloud metadata address`;
  if (linkLocal.check(address, type)) return `${address} is link-local`;
  for (const v4 of type === "ipv6" ? embeddedIPv4(address) : []) {
    if (allow.addresses.check(v4, "ipv4")) continue;
    if (metadata.check(v4, "ipv4")) return `${address} carries ${v4}, a cloud metadata address`;
    if (linkLocal.check(v4, "ipv4")) return `${address} carries ${v4}, which is link-local`;
  }
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
/** A resolver with dns.lookup's `all: true` shape: the system's, or a test's. */
export type BaseLookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export class UpstreamAddressError extends Error {
  readonly code = "ELINEWATCHBLOCKED";
}

/**
 * A `lookup` for an undici agent (`connect: { lookup }`): a host *name* whose addresses include a
 * link-local or metadata one is refused before any connection is made, so a DNS name (or a
 * rebinding one) cannot reach what a literal address may not. Every address of the name is
 * checked, not only the one picked. Literal addresses never reach a lookup: guardConnect checks those.
 */
/** The system resolver in the `all: true` shape (dns.lookup's overload for it, without a cast). */
const systemLookup: BaseLookup = (hostname, options, callback) => dnsLookup(hostname, options, callback);

export function createGuardedLookup(allowed: readonly string[], base: BaseLookup = systemLookup) {
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

type Connector<O, C> = (options: O, callback: C) => void;

/**
 * Wrap an undici connector (`buildConnector({ lookup: createGuardedLookup(...) })`) so that a
 * literal address is checked at connect time too: the API refuses such base URLs, but a line stored
 * before a rule existed, or a table a router pulled, must still not reach them.
 */
export function guardConnect<O extends { hostname: string }, C extends (error: Error, socket: null) => void>(
  base: Connector<O, C>,
  allowed: readonly string[],
): Connector<O, C> {
  const allow = compileAllowList(allowed);
  return (options, callback) => {
    const host = normalizeHost(options.hostname);
    const problem = allow.names.has(host) ? null : addressProblem(host, allow);
    if (problem) {
      const error = new UpstreamAddressError(`upstream ${host} refused: ${problem} (allow it with LINEWATCH_ALLOW_UPSTREAM_HOSTS)`);
      queueMicrotask(() => callback(error, null));
      return;
    }
    base(options, callback);
  };
}
