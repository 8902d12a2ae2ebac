// How a golden sample is added, changed and deleted, and a sample as the API shows it (with the
// checks its latest results could not evaluate).
import { isUuid, type SampleCreate, type SampleDetail, type SamplePatch, type SampleResponse, sampleProblems } from "@linewatch/contract";
import type { Sample } from "@linewatch/core";
import {
  brokenChecksOf,
  deleteSample,
  getRouteRow,
  getSample,
  insertSample,
  listSamples,
  type SampleWrite,
  updateSample,
} from "@linewatch/db";
import type { AppDeps } from "../deps";
import { NotFoundError, ValidationError } from "../errors";
import { duplicateName } from "./duplicate-name";

const sampleNamed = (name: string | undefined) => `a sample named ${JSON.stringify(name)} already exists`;
/** A stored sample on the wire: `source` is only ever "api" or "shipped" (the column is text); expect as a plain record. */
const asResponse = (s: Sample & { source: string; updatedAt: string }): SampleResponse => ({
  ...s,
  source: s.source as SampleResponse["source"],
  expect: { ...s.expect },
  variants: s.variants ?? [],
});

export class SampleService {
  constructor(private readonly deps: AppDeps) {}

  private get db() {
    return this.deps.database.db;
  }

  async list(): Promise<SampleResponse[]> {
    return (await listSamples(this.db)).map(asResponse);
  }

  async get(id: string): Promise<SampleDetail> {
    const sample = isUuid(id) ? await getSample(this.db, id) : null;
    if (!sample) throw new NotFoundError(`sample ${id}`);
    const broken = (await brokenChecksOf(this.db, id)).map((b) => ({
      check: b.name,
      detail: b.detail,
      lines: b.lines,
      lastSeenAt: new Date(b.lastSeenAt).toISOString(),
    }));
    return { ...asResponse(sample), broken };
  }

  async create(input: SampleCreate): Promise<SampleResponse> {
    await this.checkRoutes(input.routes);
    const write: SampleWrite = { ...input, timeoutMs: input.timeoutMs ?? null };
    const sample = await insertSample(this.db, write).catch(duplicateName(sampleNamed(input.name)));
    return asResponse(sample);
  }

  async update(id: string, patch: SamplePatch): Promise<SampleResponse> {
    const was = isUuid(id) ? await getSample(this.db, id) : null;
    if (!was) throw new NotFoundError(`sample ${id}`);
    // The sample the patch makes, whole: a fingerprint sample must stay one (docs/scoring.md#what-a-relay-can-fake).
    const problems = sampleProblems({
      request: patch.request ?? was.request,
      expect: patch.expect ?? was.expect,
      variants: patch.variants ?? was.variants ?? [],
    });
    if (problems.length > 0)
      throw new ValidationError(
        problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("; "),
        problems.map((p) => ({ field: p.path.join("."), message: p.message })),
      );
    await this.checkRoutes(patch.routes);
    const { expect, ...rest } = patch;
    const write: Partial<SampleWrite> = { ...rest };
    if (expect) write.expect = expect;
    const sample = await updateSample(this.db, id, write, new Date(this.deps.clock.now())).catch(duplicateName(sampleNamed(patch.name)));
    if (!sample) throw new NotFoundError(`sample ${id}`);
    return asResponse(sample);
  }

  /** Its probe results go with it. */
  async remove(id: string): Promise<void> {
    if (!isUuid(id) || !(await deleteSample(this.db, id))) throw new NotFoundError(`sample ${id}`);
  }

  private async checkRoutes(routes: string[] | undefined): Promise<void> {
    for (const [i, name] of (routes ?? []).entries()) {
      if (!(await getRouteRow(this.db, name))) throw NotFoundError.reference(`routes.${i}`, `route ${JSON.stringify(name)}`);
    }
  }
}
