import { isUuid } from "@linewatch/contract";
import type { ApiClient } from "./client";
import { ApiFailure } from "./errors";
import type { Line, LineList, Sample, SampleList } from "./types";

const notFound = (what: string, ref: string) => new ApiFailure(`${what} ${JSON.stringify(ref)} not found`, 404, "not_found");

/** A line by name or id. */
export async function findLine(api: ApiClient, ref: string): Promise<Line> {
  const { lines } = await api.get<LineList>("/v1/lines");
  const line = lines.find((l) => l.name === ref) ?? (isUuid(ref) ? lines.find((l) => l.id === ref.toLowerCase()) : undefined);
  if (!line) throw notFound("line", ref);
  return line;
}

/** A sample by name or id. */
export async function findSample(api: ApiClient, ref: string): Promise<Sample> {
  const { samples } = await api.get<SampleList>("/v1/samples");
  const sample = samples.find((s) => s.name === ref) ?? (isUuid(ref) ? samples.find((s) => s.id === ref.toLowerCase()) : undefined);
  if (!sample) throw notFound("sample", ref);
  return sample;
}
