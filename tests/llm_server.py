"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1: the language model of the tests.

Real HTTP, real tool calls, real usage counts; what it answers is decided by a script (a Python function
of the request), so a test reads like the policy a model would follow. Every request is kept, so a test
can check what the daemon told the model (and what it never told it).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHARS_PER_TOKEN = 4


@dataclass
class Turn:
    """One request of the daemon: the conversation so far and the tools offered."""

    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tools(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.body.get("tools") or []]

    @property
    def last(self) -> str:
        """The text of the last message (a tool result, or the task)."""
        content = self.messages[-1].get("content") if self.messages else ""
        return content or ""

    @property
    def system(self) -> str:
        return next((m.get("content") or "" for m in self.messages if m["role"] == "system"), "")

    def text(self) -> str:
        return json.dumps(self.body)

    def ref(self, pattern: str) -> str:
        """The ref of the last snapshot line matching `pattern` (a regex), as a model would pick it."""
        for text in reversed([m.get("content") or "" for m in self.messages]):
            for line in reversed(text.splitlines()):
                if re.search(pattern, line):
                    found = re.search(r"\[ref=([a-z0-9]+)\]", line)
                    if found:
                        return found.group(1)
        raise AssertionError(f"no snapshot line matches {pattern!r}; last message:\n{self.last[:3000]}")

    def tool_results(self) -> list[str]:
        return [m.get("content") or "" for m in self.messages if m["role"] == "tool"]


Reply = dict[str, Any]
Script = Callable[[Turn], Reply]


def say(text: str) -> Reply:
    return {"content": text}


def call(name: str, **arguments: Any) -> Reply:
    return {"tool": name, "arguments": arguments}


def answer_json(value: Any) -> Reply:
    return say(json.dumps(value))


@dataclass
class ScriptedModel:
    script: Script
    model: str = "scripted-1"
    # Seconds each answer waits first: a slow model, for cancelling mid-run.
    delay_s: float = 0.0
    turns: list[Turn] = field(default_factory=list)
    base_url: str = ""

    def _complete(self, turn: Turn) -> dict[str, Any]:
        self.turns.append(turn)
        if self.delay_s:
            time.sleep(self.delay_s)
        reply = self.script(turn)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if "tool" in reply:
            arguments = json.dumps(reply["arguments"])
            message["tool_calls"] = [
                {
                    "id": f"call_{len(self.turns)}",
                    "type": "function",
                    "function": {"name": reply["tool"], "arguments": arguments},
                }
            ]
        prompt = len(json.dumps(turn.body.get("messages"))) // CHARS_PER_TOKEN
        completion = len(json.dumps(message)) // CHARS_PER_TOKEN
        return {
            "id": f"chatcmpl-{len(self.turns)}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if "tool" in reply else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def requests_text(self) -> str:
        return "\n".join(turn.text() for turn in self.turns)


@contextmanager
def scripted_model(script: Script, **options: Any) -> Iterator[ScriptedModel]:
    model = ScriptedModel(script, **options)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                answer = model._complete(Turn(body, dict(self.headers.items())))
            except Exception as exc:  # a script that fails answers 500 with its error, as a broken server would
                self._send(500, {"error": {"message": repr(exc)}})
                return
            self._send(200, answer)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    model.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()


def model_env(model: ScriptedModel) -> dict[str, str]:
    """The daemon's [llm] settings for this model."""
    return {"BROWSERD_LLM_BASE_URL": model.base_url, "BROWSERD_LLM_MODEL": model.model}
