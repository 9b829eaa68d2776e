/** The parts of Google's GenerateContentResponse that the translation reads. */

export interface GeminiPart {
  text?: string;
  /** Set on a text part that is the model's thinking, sent only when `includeThoughts` was asked for. */
  thought?: boolean;
  /** Opaque; thinking models sign function calls and want the signature back with the turn. */
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: unknown };
}

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  /** A stream that fails after it started says so in an event of its own. */
  error?: { code?: number; message?: string; status?: string };
}
