/** The fixed capability vocabulary of the catalog: every model's `capabilities` are ids of this list. */

export interface Endpoint {
  method: 'GET' | 'POST';
  /** Under the gateway's base URL, `/v1` included. */
  path: string;
}

export interface Capability {
  id: string;
  description: string;
  endpoint: Endpoint;
}

const post = (path: string): Endpoint => ({ method: 'POST', path: `/v1${path}` });
const get = (path: string): Endpoint => ({ method: 'GET', path: `/v1${path}` });

export const CAPABILITIES = [
  {
    id: 'chat',
    description: 'Conversational text generation from a list of messages',
    endpoint: post('/chat/completions'),
  },
  { id: 'vision', description: 'Accepts images in chat messages', endpoint: post('/chat/completions') },
  {
    id: 'function_calling',
    description: 'Calls client-defined tools (functions with a JSON-schema `parameters`)',
    endpoint: post('/chat/completions'),
  },
  {
    id: 'json_mode',
    description: 'Answers in JSON when asked with `response_format`',
    endpoint: post('/chat/completions'),
  },
  {
    id: 'reasoning',
    description: 'Thinks before answering; reasoning is streamed as `reasoning_content` deltas',
    endpoint: post('/chat/completions'),
  },
  {
    id: 'streaming',
    description: 'Streams its answer as server-sent events',
    endpoint: post('/chat/completions'),
  },
  { id: 'embeddings', description: 'Turns text into embedding vectors', endpoint: post('/embeddings') },
  {
    id: 'image-generation',
    description: 'Generates images from a prompt',
    endpoint: post('/images/generations'),
  },
  {
    id: 'image-editing',
    description: 'Edits an image from a prompt (and an optional mask)',
    endpoint: post('/images/edits'),
  },
  {
    id: 'speech-to-text',
    description: 'Transcribes recorded audio',
    endpoint: post('/audio/transcriptions'),
  },
  {
    id: 'realtime-transcription',
    description: 'Transcribes or converses over a live audio stream (WebSocket)',
    endpoint: get('/realtime'),
  },
  { id: 'text-to-speech', description: 'Speaks text aloud', endpoint: post('/audio/speech') },
  {
    id: 'text-to-music',
    description: 'Composes music from a prompt (an async job)',
    endpoint: post('/audio/music'),
  },
  {
    id: 'text-to-video',
    description: 'Generates video from a prompt (an async job)',
    endpoint: post('/videos/generations'),
  },
  {
    id: 'text-to-3d',
    description: 'Generates a 3D asset from a prompt (an async job)',
    endpoint: post('/3d/generations'),
  },
  { id: 'moderation', description: 'Flags unsafe content per category', endpoint: post('/moderations') },
  { id: 'translation', description: 'Translates text between languages', endpoint: post('/translations') },
  {
    id: 'classification',
    description: 'Labels inputs with a score per label',
    endpoint: post('/classifications'),
  },
  {
    id: 'object-detection',
    description: 'Finds objects in an image, with bounding boxes',
    endpoint: post('/detections'),
  },
  { id: 'ocr', description: 'Extracts text from images and documents', endpoint: post('/ocr') },
  { id: 'rerank', description: 'Orders documents by relevance to a query', endpoint: post('/rerank') },
  {
    id: 'async',
    description:
      'Runs as a job: the request is accepted with 202 and the result is fetched (or sent by webhook)',
    endpoint: get('/jobs/{id}'),
  },
] as const satisfies readonly Capability[];

export type CapabilityId = (typeof CAPABILITIES)[number]['id'];

const byId = new Map<string, Capability>(CAPABILITIES.map((c) => [c.id, c]));

export function findCapability(id: string): Capability | undefined {
  return byId.get(id);
}

/** Where a model is called: the endpoint of its main (first) capability; chat when it has none. */
export function endpointOf(capabilities: readonly string[]): Endpoint {
  const first = capabilities[0];
  return (first && byId.get(first)?.endpoint) || post('/chat/completions');
}
