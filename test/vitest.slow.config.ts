import { SLOW_TESTS, testConfig } from "./vitest.config";

export default testConfig({ include: SLOW_TESTS, exclude: ["**/node_modules/**"] });
