"""The gateway through the official Python SDKs, as a Python user calls it: typed methods where the SDK has them,
its raw request helpers (client.get/post/delete) for the gateway's own routes."""

import base64
import io
import json
import struct
import wave
import zlib

import anthropic
import openai
import pytest

CHAT_LINE = {
    "custom_id": "one",
    "method": "POST",
    "url": "/v1/chat/completions",
    "body": {"model": "local/echo", "messages": [{"role": "user", "content": "from python"}]},
}


def upload(client: openai.OpenAI, text: str):
    return client.files.create(file=("input.jsonl", io.BytesIO(text.encode()), "application/jsonl"), purpose="batch")


def test_files_create_list_read_and_delete(client: openai.OpenAI):
    created = upload(client, json.dumps(CHAT_LINE) + "\n")
    assert created.purpose == "batch"
    assert created.id in [f.id for f in client.files.list()]
    assert client.files.retrieve(created.id).bytes == created.bytes
    assert json.loads(client.files.content(created.id).text)["custom_id"] == "one"
    deleted = client.files.delete(created.id)
    assert deleted.deleted is True
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(created.id)


def test_batches_create_retrieve_and_cancel(client: openai.OpenAI):
    file = upload(client, json.dumps(CHAT_LINE) + "\n")
    batch = client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert batch.status == "validating"
    assert client.batches.retrieve(batch.id).id == batch.id
    cancelled = client.batches.cancel(batch.id)
    assert cancelled.status in ("cancelling", "cancelled")
    # The gateway's default window: only the file and the endpoint, the endpoint without /v1.
    short = client.post("/batches", body={"input_file_id": file.id, "endpoint": "/chat/completions"}, cast_to=object)
    assert short["completion_window"] == "24h"
    assert short["endpoint"] == "/v1/chat/completions"


def test_jobs_cancel_with_delete(client: openai.OpenAI):
    accepted = client.post("/3d/generations", body={"prompt": "a statue"}, cast_to=object)
    assert accepted["object"] == "job"
    cancelled = client.delete(f"/jobs/{accepted['id']}", cast_to=object)
    assert cancelled["status"] == "failed"
    assert cancelled["error"]["type"] == "cancelled"
    assert cancelled["webhook_delivered"] is False
    with pytest.raises(openai.ConflictError):
        client.delete(f"/jobs/{accepted['id']}", cast_to=object)


def test_sub_accounts_create_read_and_delete(client: openai.OpenAI):
    sub = client.post("/sub-accounts", body={"name": "py-team", "spend_cap_cents": 100}, cast_to=object)
    assert sub["key"].startswith("sk-gw-")
    assert client.get(f"/sub-accounts/{sub['id']}", cast_to=object)["name"] == "py-team"
    deleted = client.delete(f"/sub-accounts/{sub['id']}", cast_to=object)
    assert deleted == {"id": sub["id"], "object": "sub_account", "deleted": True}
    with pytest.raises(openai.NotFoundError):
        client.get(f"/sub-accounts/{sub['id']}", cast_to=object)


def test_webhook_secret_rotates(client: openai.OpenAI):
    before = client.get("/webhook-secret", cast_to=object)
    rotated = client.post("/webhook-secret/rotate", cast_to=object)
    assert rotated["generation"] == before["generation"] + 1
    assert rotated["secret"] != before["secret"]


def test_chat_with_a_provider_less_id_and_unique_ids(client: openai.OpenAI):
    raw = client.chat.completions.with_raw_response.create(
        model="echo", messages=[{"role": "user", "content": "bonjour"}]
    )
    completion = raw.parse()
    assert raw.headers["x-model"] == "local/echo"
    assert completion.choices[0].message.content == "bonjour"
    other = client.chat.completions.create(model="echo", messages=[{"role": "user", "content": "bonjour"}])
    assert other.id != completion.id


def test_errors_name_the_field(client: openai.OpenAI):
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="local/echo", messages=[{"role": "user", "content": "x"}], max_tokens=10_000_000
        )
    assert refused.value.param == "max_tokens"
    assert refused.value.body["code"] == 400
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="nobody/nothing", messages=[{"role": "user", "content": "x"}])
    assert missing.value.type == "model_not_found"


def test_streams_and_compressed_answers(client: openai.OpenAI):
    text = "".join(
        chunk.choices[0].delta.content or ""
        for chunk in client.chat.completions.create(
            model="local/echo", messages=[{"role": "user", "content": "one two three"}], stream=True
        )
        if chunk.choices
    )
    assert text == "one two three"
    # The whole catalog (the list's default is what this gateway serves now): over a megabyte, sent compressed.
    models = client.models.with_raw_response.list(extra_query={"all": "true"})
    assert models.headers["content-encoding"] == "gzip"
    assert len(models.parse().data) > 100
    assert all(model.available for model in client.models.list().data)


def test_keyless_embeddings_and_moderation(client: openai.OpenAI):
    vectors = client.embeddings.create(model="local/embed", input=["same words", "same words"]).data
    assert vectors[0].embedding == vectors[1].embedding
    flagged = client.moderations.create(model="local/moderation", input="I will kill you").results[0]
    assert flagged.flagged is True


def test_keyless_images_speech_and_transcription(client: openai.OpenAI):
    png = base64.b64decode(
        client.images.generate(model="local/image", prompt="a lighthouse", response_format="b64_json").data[0].b64_json
    )
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (256, 256)
    assert zlib.crc32(png[12:29]) == struct.unpack(">I", png[29:33])[0]

    text = "Hello from Python, gateway!"
    audio = client.audio.speech.create(model="local/speech", voice="alloy", input=text).content
    with wave.open(io.BytesIO(audio)) as played:
        assert (played.getframerate(), played.getnchannels(), played.getsampwidth()) == (24000, 1, 2)
        assert played.getnframes() > 24000 // 2
    transcript = client.audio.transcriptions.create(model="local/transcribe", file=("speech.wav", audio))
    assert transcript.text == text


def test_anthropic_messages_and_errors(claude: anthropic.Anthropic):
    message = claude.messages.create(
        model="local/echo", max_tokens=32, messages=[{"role": "user", "content": "hello claude"}]
    )
    assert message.content[0].text == "hello claude"
    with pytest.raises(anthropic.NotFoundError) as missing:
        claude.messages.create(model="nobody/nothing", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    assert missing.value.body["error"]["type"] == "model_not_found"
    assert missing.value.body["error"]["code"] == 404
    assert claude.messages.count_tokens(
        model="local/echo", messages=[{"role": "user", "content": "hi"}]
    ).input_tokens > 0
