// The simulated models (models.ts) behind the lab's HTTP lines: a request whose prompt is one of the
// starter bank's phrasings is answered as the named model answers it at temperature 0, and counted
// with its tokenizer. Lines that name the same model answer alike (the model is built from its name);
// the relay modes choose another model for some requests (docs/scoring.md#what-a-relay-can-fake).
import { fnv1a32 } from "@linewatch/core";
import { answerText, buildModel, FINGERPRINT_BANK, type ServedRequest, type SimModel, siblingModel } from "./models";
import type { FaultSetting } from "./modes";

/** A bank prompt recognised in a request: which prompt, which of its phrasings. */
export interface FingerprintAsk {
  promptId: string;
  phrasing: number;
}

const PHRASINGS = new Map<string, FingerprintAsk>(
  FINGERPRINT_BANK.flatMap((p) =>
    p.phrasings.map((text, phrasing): [string, FingerprintAsk] => [text.trim(), { promptId: p.id, phrasing }]),
  ),
);

/** The bank prompt a user message is, or null. */
export function fingerprintAsk(user: string): FingerprintAsk | null {
  return PHRASINGS.get(user.trim()) ?? null;
}

const models = new Map<string, SimModel>();
/** The simulated model a name stands for (the same name, the same model, in every lab). */
export function modelNamed(name: string): SimModel {
  let m = models.get(name);
  if (!m) {
    m = buildModel({ name, seed: fnv1a32(name) });
    models.set(name, m);
  }
  return m;
}

/** A cheaper sibling of the named model whose modal answer differs on `differOn` of the bank's prompts. */
export function siblingNamed(name: string, differOn: number): SimModel {
  const key = `${name}\n${differOn}`;
  let m = models.get(key);
  if (!m) {
    m = siblingModel(modelNamed(name), { name: `${name}-mini`, seed: fnv1a32(`${name}-mini`), differOn });
    models.set(key, m);
  }
  return m;
}

/** Which model answers a fingerprint request under a fault: the named one, or the relay's choice. */
export function servingModel(name: string, fault: FaultSetting, req: ServedRequest, rng: () => number): SimModel {
  switch (fault.mode) {
    case "substitute":
      return rng() < fault.share ? siblingNamed(name, fault.differOn) : modelNamed(name);
    case "recognise-probes": {
      const looksLikeProbe =
        fault.by === "fixed-prompt" ? req.phrasing === 0 : Object.keys(req.headers).some((h) => h.toLowerCase() === fault.header);
      return looksLikeProbe ? modelNamed(name) : siblingNamed(name, fault.differOn);
    }
    default:
      return modelNamed(name);
  }
}

/** The answer text of a fingerprint request, as `model` gives it (drawn with `rng`). */
export const fingerprintText = (model: SimModel, ask: FingerprintAsk, rng: () => number): string =>
  answerText(model, ask.promptId, ask.phrasing, rng);
