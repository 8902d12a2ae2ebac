export * from "./probe-relay";
