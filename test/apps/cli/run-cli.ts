import { run } from "../../../apps/cli/src/run";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * One `linewatch` command line, in process: the code the binary runs (apps/cli/src/main.ts hands
 * run() the process's argv, streams, environment and directory), without a node and tsx start per
 * case. `env` is all the environment the command sees. binary.test.ts runs the real binary.
 */
export async function runCli(argv: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: (t: string) => {
      stdout += t;
    },
    stderr: (t: string) => {
      stderr += t;
    },
    env: opts.env ?? {},
    cwd: opts.cwd ?? process.cwd(),
  };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}
