"""A real local HTTP server speaking the OpenAI chat-completions protocol, for tests.

It listens on 127.0.0.1 (port 0 = any free port) and answers POST /v1/chat/completions
with scripted answers, one per request, in order (the last one repeats). Every request
body and its headers are recorded so tests can check what the client sent, and that a
cached run sent nothing.

    with ScriptedLLMServer() as srv:
        srv.push(reply("<regex>(?=^## )</regex>"))
        settings = LLMSettings(base_url=srv.base_url, api_key="sk-test", ...)

Also usable by hand (the demo in bench/ uses it): ``python tests/llm_server.py``.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Answer:
    """One scripted answer: an HTTP status, a body, extra headers, an optional delay."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    content_type: str = "application/json"


def _completion(content: str, model: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-local-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply(content: str, *, model: str = "", prompt_tokens: int | None = None,
          completion_tokens: int | None = None, delay: float = 0.0) -> Answer:
    """A successful completion whose message content is ``content``.

    An empty ``model`` echoes the model the client asked for; token counts default to
    a rough estimate filled in by the server from the request size.
    """
    body = {"__reply__": content, "model": model, "pt": prompt_tokens, "ct": completion_tokens}
    return Answer(200, json.dumps(body).encode(), delay=delay)


def error(status: int, message: str = "", *, retry_after: float | None = None,
          err_type: str = "error", code: str | None = None) -> Answer:
    """An OpenAI-style error body with the given HTTP status."""
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    body = {"error": {"message": message or f"scripted {status}", "type": err_type, "param": None, "code": code}}
    return Answer(status, json.dumps(body).encode(), headers=headers)


def malformed() -> Answer:
    """HTTP 200 with a body that is not JSON at all."""
    return Answer(200, b"{this is not json", content_type="application/json")


def empty_choices() -> Answer:
    """HTTP 200 with valid JSON but no choices."""
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [],
            "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}
    return Answer(200, json.dumps(body).encode())


def slow(seconds: float, content: str = "<regex>\\n</regex>") -> Answer:
    """A good answer that arrives only after ``seconds`` (to exercise client timeouts)."""
    return reply(content, delay=seconds)


class ScriptedLLMServer:
    """Threaded loopback server; ``push`` answers, read ``requests`` afterwards."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._answers: list[Answer | Callable[[dict[str, Any]], Answer]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.requests: list[dict[str, Any]] = []  # {"path", "headers" (lower-case names), "json"}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, answer: Answer) -> None:
                if answer.delay:
                    server._stop.wait(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(answer.body)))
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): fine

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [{"id": "test-model", "object": "model", "created": 0, "owned_by": "test"}]}
                    self._send(Answer(200, json.dumps(body).encode()))
                else:
                    self._send(error(404, f"no route {self.path}"))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    payload = {"__invalid__": raw.decode("utf-8", "replace")}
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": payload})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(error(404, f"no route {self.path}"))
                    return
                self._send(server._next_answer(payload))

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="llm-test-server", daemon=True)

    # --- scripting -------------------------------------------------------------------
    def push(self, *answers: Answer | Callable[[dict[str, Any]], Answer]) -> "ScriptedLLMServer":
        with self._lock:
            self._answers.extend(answers)
        return self

    def _next_answer(self, payload: dict[str, Any]) -> Answer:
        with self._lock:
            if not self._answers:
                return error(500, "test server: no scripted answer left")
            item = self._answers.pop(0) if len(self._answers) > 1 else self._answers[0]
        answer = item(payload) if callable(item) else item
        if answer.status == 200 and answer.body.startswith(b'{"__reply__"'):
            spec = json.loads(answer.body)
            prompt_chars = sum(len(str(m.get("content", ""))) for m in payload.get("messages", []))
            body = _completion(
                spec["__reply__"],
                spec["model"] or str(payload.get("model", "test-model")),
                spec["pt"] if spec["pt"] is not None else max(1, prompt_chars // 4),
                spec["ct"] if spec["ct"] is not None else max(1, len(spec["__reply__"]) // 4),
            )
            answer = Answer(200, json.dumps(body).encode(), delay=answer.delay)
        return answer

    # --- lifecycle -------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    def start(self) -> "ScriptedLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


if __name__ == "__main__":  # manual use: answers every request with a heading regex
    srv = ScriptedLLMServer(port=0).push(reply("<regex>(?m)^(?=#{1,3} )</regex>")).start()
    print(f"serving chat completions at {srv.base_url} (Ctrl-C to stop)")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
