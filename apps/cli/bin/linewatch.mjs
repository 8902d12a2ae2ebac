#!/usr/bin/env node
// `linewatch`: the CLI runs from the TypeScript sources through the repository's own tsx, so a
// fresh clone needs no build step. tsconfig.json at the root sets the JSX runtime the control
// plane (`linewatch serve`) renders its dashboard with, whatever directory this is run from.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../../../tsconfig.json", import.meta.url)) });
await import("../src/main.ts");
