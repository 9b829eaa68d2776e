"""Records the exact requests the Python SDKs send on body-less calls, for sdk-requests.json.

Run: python capture_requests.py > sdk-requests.json (with openai and anthropic installed). A local server answers
every request with an empty JSON object; what each SDK sent (method, path, headers in order, body) is printed.
The vitest spec test/http/python-sdk-requests.e2e.spec.ts replays these requests byte for byte.
"""

import http.server
import json
import threading

import anthropic
import openai

seen = []


class Recorder(http.server.BaseHTTPRequestHandler):
    def _record(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        seen.append(
            {
                "method": self.command,
                "path": self.path,
                "headers": [[name, value] for name, value in self.headers.items()],
                "body": body.decode(),
            }
        )
        out = b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_DELETE = _record

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_port}"

client = openai.OpenAI(api_key="KEY", base_url=f"{url}/v1", max_retries=0)
calls = {
    "files.delete": lambda: client.files.delete("FILE_ID"),
    "batches.cancel": lambda: client.batches.cancel("BATCH_ID"),
    "jobs.delete": lambda: client.delete("/jobs/JOB_ID", cast_to=object),
    "sub_accounts.delete": lambda: client.delete("/sub-accounts/SUB_ACCOUNT_ID", cast_to=object),
    "webhook_secret.rotate": lambda: client.post("/webhook-secret/rotate", cast_to=object),
}
names = []
for name, call in calls.items():
    try:
        call()
    except Exception:  # the answer is not what the SDK parses; the request is what is recorded
        pass
    names.append(name)

claude = anthropic.Anthropic(api_key="KEY", base_url=url, max_retries=0)
try:
    claude.models.list()
except Exception:
    pass
names.append("anthropic.models.list")

for name, request in zip(names, seen):
    request["call"] = name
    request["sdk"] = next(v for k, v in request["headers"] if k.lower() == "user-agent")
    for header in request["headers"]:
        if header[0].lower() == "host":
            header[1] = "HOST"
print(json.dumps(seen, indent=2))
