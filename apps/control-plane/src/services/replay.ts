// A policy replay over recorded probe results (docs/replay.md): reads only, never writes.
import type { ReplayReport } from "@linewatch/core";
import type { AppDeps } from "../deps";
import type { Engine } from "../engine";
import { type ReplayProgress, type ReplayRequest, resolveReplay, runReplay } from "../replay/run-replay";

export interface PreparedReplay {
  /** `signal` aborts it between pages; `onProgress` hears how far it got. */
  run(opts?: { signal?: AbortSignal; onProgress?: (p: ReplayProgress) => void }): Promise<ReplayReport>;
}

export class ReplayService {
  constructor(
    private readonly deps: AppDeps,
    private readonly engine: Engine,
  ) {}

  /**
   * Checks the request against the registry as it is now (a bad one throws its 400, naming the field,
   * before anything runs: a streamed answer has not started yet) and returns the replay to run.
   */
  async prepare(request: ReplayRequest): Promise<PreparedReplay> {
    const snapshot = await this.engine.registry.get();
    resolveReplay(request, snapshot, this.deps.clock.now(), this.deps.config.retentionDays);
    return { run: (opts = {}) => runReplay(this.deps, snapshot, request, opts) };
  }
}
