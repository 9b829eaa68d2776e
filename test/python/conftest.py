"""Clients of a running gateway, built from the environment the vitest spec sets (python-sdk.e2e.spec.ts)."""

import os

import anthropic
import openai
import pytest


@pytest.fixture(scope="session")
def gateway_url() -> str:
    return os.environ["GATEWAY_URL"]


@pytest.fixture(scope="session")
def key() -> str:
    return os.environ["GATEWAY_KEY"]


@pytest.fixture(scope="session")
def client(gateway_url: str, key: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=key, base_url=f"{gateway_url}/v1", max_retries=0)


@pytest.fixture(scope="session")
def claude(gateway_url: str, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=key, base_url=gateway_url, max_retries=0)
