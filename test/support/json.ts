/** A parsed JSON body, loosely typed: tests assert its shape. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are checked by assertions, not by types
export type Json = any;

export async function json(response: Response): Promise<Json> {
  return response.json();
}
