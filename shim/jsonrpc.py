"""Newline-delimited JSON-RPC 2.0 over stdio: reading messages, writing results, errors, notifications."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, BinaryIO

import msgspec

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId = int | str

# A single line can carry a full-page screenshot in base64.
MAX_LINE_BYTES = 128 * 1024 * 1024

_encoder = msgspec.json.Encoder()


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class StdioChannel:
    def __init__(self, out: BinaryIO | None = None) -> None:
        self._out = out or sys.stdout.buffer

    async def open_reader(self) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return reader

    def _write(self, message: dict[str, Any]) -> None:
        # Writes are synchronous and whole, so concurrent tasks never interleave half lines.
        self._out.write(_encoder.encode(message) + b"\n")
        self._out.flush()

    def result(self, request_id: RequestId, result: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: RequestId | None, error: RpcError) -> None:
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        self._write({"jsonrpc": "2.0", "id": request_id, "error": body})

    def request(self, request_id: RequestId, method: str, params: dict[str, Any]) -> None:
        """A request of the server to the client (sampling/createMessage); its answer comes in on stdin."""
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)


def decode(line: bytes) -> dict[str, Any]:
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError as exc:
        raise RpcError(PARSE_ERROR, f"parse error: {exc}") from exc
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 message")
    return message
