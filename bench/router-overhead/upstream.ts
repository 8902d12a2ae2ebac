// The upstream of the benchmark: one lab line on 127.0.0.1, in its own process.
// Prints `READY <baseUrl>` when it listens.
import { startLab } from "@linewatch/lab";

const lab = await startLab({ lines: [{ name: "up", apiKey: "sk-bench", model: "lab-model" }] });
process.stdout.write(`READY ${lab.baseUrl("up")}\n`);
const stop = () => {
  lab.close().then(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
