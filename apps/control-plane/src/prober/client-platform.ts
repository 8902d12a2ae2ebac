// This process as the official SDKs describe the machine they run on (their `x-stainless-os`, `-arch`,
// `-runtime-version` headers), so a probe claims what an SDK client here would claim.
import type { ClientPlatform } from "@linewatch/core";

function sdkOs(platform: string): string {
  const names: Record<string, string> = {
    android: "Android",
    darwin: "MacOS",
    win32: "Windows",
    freebsd: "FreeBSD",
    openbsd: "OpenBSD",
    linux: "Linux",
  };
  return names[platform] ?? `Other:${platform}`;
}

function sdkArch(arch: string): string {
  if (arch === "x32" || arch === "x64" || arch === "arm" || arch === "arm64") return arch;
  return `other:${arch}`;
}

export const clientPlatform: ClientPlatform = Object.freeze({
  os: sdkOs(process.platform),
  arch: sdkArch(process.arch),
  runtime: "node",
  runtimeVersion: process.version,
});
