// Error bodies in the shape OpenAI clients parse: {"error": {message, type, param, code}}.

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function openAIError(message: string, type: string, code: string | null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}
