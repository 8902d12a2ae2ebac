import { isUniqueViolation } from "@linewatch/db";
import { ConflictError } from "../errors";

/** For a write's catch: a name another row holds is a 409 naming the field; any other error goes on as it was. */
export const duplicateName =
  (message: string) =>
  (e: unknown): never => {
    throw isUniqueViolation(e) ? new ConflictError(message, [{ field: "name", message: "already exists" }]) : e;
  };
