export { fingerprintAsk, modelNamed, siblingNamed } from "./fingerprints";
export { type Lab, type LabLine, type LabLineOptions, type LabOptions, startLab, startLabLine } from "./lab";
export { ENDPOINTS, type Endpoint, LabError, type LineOptions, type LineStats, type RecordedRequest, type Usage } from "./line";
export { FINGERPRINT_BANK, type FingerprintPrompt, type SimModel } from "./models";
export {
  DEFAULTS as MODE_DEFAULTS,
  type FaultMode,
  type FaultSetting,
  isLabMode,
  LAB_MODES,
  type LabMode,
  type ModeParams,
  type ModeParamsMap,
  type ModeRequest,
  type ModeSetting,
  parseModeRequest,
} from "./modes";
