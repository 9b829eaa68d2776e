/**
 * curl, Python and TypeScript snippets for a model's example request, with the official OpenAI SDKs pointed at the
 * gateway. Endpoints the SDKs have no method for go through their generic `post`; the realtime WebSocket through
 * the usual WebSocket libraries.
 */
import type { Endpoint } from './capabilities.ts';

export interface SdkSnippets {
  curl: string;
  python: string;
  typescript: string;
}

interface SdkCall {
  /** The method on the OpenAI client. */
  method: string;
  pythonResult: string;
  typescriptResult: string;
  typescriptImports?: string[];
  /** Multipart upload: the SDKs send a file where the JSON form has this URL field. */
  upload?: { urlField: string; fileName: string };
  curlOutput?: string;
}

const SDK_CALLS: Readonly<Record<string, SdkCall>> = {
  chat: {
    method: 'chat.completions.create',
    pythonResult: 'print(response.choices[0].message.content)',
    typescriptResult: 'console.log(response.choices[0]?.message.content);',
  },
  embeddings: {
    method: 'embeddings.create',
    pythonResult: 'print(len(response.data[0].embedding))',
    typescriptResult: 'console.log(response.data[0]?.embedding.length);',
  },
  'image-generation': {
    method: 'images.generate',
    pythonResult: 'print(response.data[0].b64_json[:32])',
    typescriptResult: 'console.log(response.data?.[0]?.b64_json?.slice(0, 32));',
  },
  'speech-to-text': {
    method: 'audio.transcriptions.create',
    pythonResult: 'print(response.text)',
    typescriptResult: 'console.log(response.text);',
    typescriptImports: ["import { createReadStream } from 'node:fs';"],
    upload: { urlField: 'audio_url', fileName: 'meeting.mp3' },
  },
  'text-to-speech': {
    method: 'audio.speech.create',
    pythonResult: 'response.write_to_file("speech.mp3")',
    typescriptResult: "await writeFile('speech.mp3', Buffer.from(await response.arrayBuffer()));",
    typescriptImports: ["import { writeFile } from 'node:fs/promises';"],
    curlOutput: 'speech.mp3',
  },
  moderation: {
    method: 'moderations.create',
    pythonResult: 'print(response.results[0].flagged)',
    typescriptResult: 'console.log(response.results[0]?.flagged);',
  },
};

const KEY = 'GATEWAY_API_KEY';

export function sdkSnippets(
  capability: string,
  endpoint: Endpoint & { url: string },
  baseUrl: string,
  request: Record<string, unknown>,
): SdkSnippets {
  if (endpoint.method === 'GET') return webSocketSnippets(endpoint.url, request);
  const call = SDK_CALLS[capability];
  const apiBase = `${baseUrl}/v1`;
  const pyClient = `import os\nfrom openai import OpenAI\n\nclient = OpenAI(base_url=${py(apiBase)}, api_key=os.environ[${py(KEY)}])`;
  const tsClient = `const client = new OpenAI({ baseURL: ${ts(apiBase)}, apiKey: process.env.${KEY} });`;
  if (!call) {
    const path = endpoint.path.replace(/^\/v1/, '');
    return {
      curl: curlJson(endpoint.url, request),
      python: `import httpx\n${pyClient}\n\nresponse = client.post(${py(path)}, cast_to=httpx.Response, body=${py(request)})\nprint(response.json())\n`,
      typescript: `import OpenAI from 'openai';\n\n${tsClient}\nconst response = await client.post(${ts(path)}, { body: ${tsObject(request)} });\nconsole.log(response);\n`,
    };
  }
  const { upload } = call;
  const fields = Object.entries(request).filter(([key]) => key !== upload?.urlField);
  const pyArgs = fields.map(([key, value]) => `    ${key}=${py(value)},\n`).join('');
  const pyFile = upload ? `    file=open(${py(upload.fileName)}, "rb"),\n` : '';
  const tsFields = fields.map(([key, value]) => `  ${tsKey(key)}: ${tsLiteral(value)},\n`).join('');
  const tsFile = upload ? `  file: createReadStream(${ts(upload.fileName)}),\n` : '';
  const imports = [...(call.typescriptImports ?? []), "import OpenAI from 'openai';"].join('\n');
  return {
    curl: upload
      ? curlMultipart(endpoint.url, fields, upload.fileName)
      : curlJson(endpoint.url, request, call.curlOutput),
    python: `${pyClient}\n\nresponse = client.${call.method}(\n${pyArgs}${pyFile})\n${call.pythonResult}\n`,
    typescript: `${imports}\n\n${tsClient}\nconst response = await client.${call.method}({\n${tsFields}${tsFile}});\n${call.typescriptResult}\n`,
  };
}

function webSocketSnippets(url: string, query: Record<string, unknown>): SdkSnippets {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const wsUrl = `${url.replace(/^http/, 'ws')}?${params}`;
  return {
    curl: `# A WebSocket endpoint: curl only shows the handshake; stream audio with a WebSocket client.\ncurl -i -N --http1.1 ${shell(`${url}?${params}`)} \\\n  -H "Authorization: Bearer $${KEY}" \\\n  -H "Connection: Upgrade" -H "Upgrade: websocket" \\\n  -H "Sec-WebSocket-Version: 13" -H "Sec-WebSocket-Key: SGVsbG8sIHdvcmxkIQ=="\n`,
    python: `import asyncio, json, os\nimport websockets\n\nasync def main():\n    headers = {"Authorization": f"Bearer {os.environ['${KEY}']}"}\n    async with websockets.connect(${py(wsUrl)}, additional_headers=headers) as ws:\n        await ws.send(open("audio.raw", "rb").read())\n        await ws.send(json.dumps({"type": "CloseStream"}))\n        async for message in ws:\n            print(message)\n\nasyncio.run(main())\n`,
    typescript: `import { readFileSync } from 'node:fs';\nimport WebSocket from 'ws';\n\nconst ws = new WebSocket(${ts(wsUrl)}, {\n  headers: { Authorization: \`Bearer \${process.env.${KEY}}\` },\n});\nws.on('open', () => {\n  ws.send(readFileSync('audio.raw'));\n  ws.send(JSON.stringify({ type: 'CloseStream' }));\n});\nws.on('message', (data) => console.log(String(data)));\n`,
  };
}

function curlJson(url: string, body: unknown, output?: string): string {
  const out = output ? ` \\\n  --output ${output}` : '';
  return `curl ${shell(url)} \\\n  -H "Authorization: Bearer $${KEY}" \\\n  -H "Content-Type: application/json" \\\n  -d ${shell(JSON.stringify(body))}${out}\n`;
}

function curlMultipart(url: string, fields: [string, unknown][], fileName: string): string {
  const forms = fields.map(([k, v]) => `  -F ${shell(`${k}=${String(v)}`)} \\\n`).join('');
  return `curl ${shell(url)} \\\n  -H "Authorization: Bearer $${KEY}" \\\n${forms}  -F file=@${fileName}\n`;
}

const shell = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/** A Python literal on one line (JSON's strings are valid Python strings). */
function py(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (Array.isArray(value)) return `[${value.map(py).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${py(v)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

const ts = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
const tsKey = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : ts(k));

function tsLiteral(value: unknown): string {
  if (typeof value === 'string') return ts(value);
  if (Array.isArray(value)) return `[${value.map(tsLiteral).join(', ')}]`;
  if (value !== null && typeof value === 'object') return tsObject(value);
  return JSON.stringify(value ?? null);
}

function tsObject(value: object): string {
  const entries = Object.entries(value).map(([k, v]) => `${tsKey(k)}: ${tsLiteral(v)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}
