// What can go wrong, and the exit code each gives (scripts branch on these).

export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

export interface FieldProblem {
  field?: string;
  message: string;
}

/** Any error the CLI reports on its own terms: a message, the fields at fault and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly details: FieldProblem[] = [],
    readonly code: string = "error",
  ) {
    super(message);
  }
}

/** The command line itself is wrong (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage, [], "usage");
  }
}

/** The API answered with an error, or a file is invalid (exit 1). */
export class ApiFailure extends CliError {
  constructor(
    message: string,
    readonly status: number | null,
    code: string,
    details: FieldProblem[] = [],
  ) {
    super(message, EXIT.failed, details, code);
  }
}

/** A file or argument value the API would refuse, caught before anything changed (exit 1). */
export class InvalidInput extends CliError {
  constructor(message: string, details: FieldProblem[] = []) {
    super(message, EXIT.failed, details, "invalid_request");
  }
}

/** The control plane could not be reached or did not answer in time (exit 3). */
export class Unreachable extends CliError {
  constructor(message: string) {
    super(message, EXIT.unreachable, [], "unreachable");
  }
}
