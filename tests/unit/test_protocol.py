"""Property tests for the wire protocol: messages and length-prefixed msgpack framing.

Requirements covered: DESIGN.md §2 (framing, message names, "the daemon never dies of a bad frame"),
reference/003 S3-30..S3-37 (REGISTER / REGISTER_OK / REQUEST / RESPONSE / EVENT / CANCEL /
TOOLS_CHANGED / SESSION_START / SESSION_END / PING / PONG / ERROR), D-05 (one tagged msgspec union
validated at the boundary; frames over the limit are fatal, undecodable frames spoil only themselves).
"""

from __future__ import annotations

import asyncio
import re
import typing
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from browserd.protocol import PROTOCOL_VERSION
from browserd.protocol.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    HEADER,
    FrameError,
    decode_body,
    encode_frame,
    frame_length,
    read_frame,
)
from browserd.protocol.messages import (
    Cancel,
    ClientCapabilities,
    ClientInfo,
    Content,
    DaemonInfo,
    Error,
    ErrorInfo,
    Event,
    ImageContent,
    Message,
    Payload,
    Ping,
    Pong,
    Register,
    RegisterOk,
    Request,
    Response,
    Sample,
    SampleResult,
    SessionEnd,
    SessionStart,
    TextContent,
    ToolsChanged,
    ToolSpec,
    protocol_major,
)

EXAMPLES = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
READ_TIMEOUT_S = 5.0

# Every wire tag, with the Struct it decodes to (DESIGN.md §2).
TAGS: dict[str, type[Any]] = {
    "REGISTER": Register,
    "REGISTER_OK": RegisterOk,
    "REQUEST": Request,
    "RESPONSE": Response,
    "EVENT": Event,
    "CANCEL": Cancel,
    "TOOLS_CHANGED": ToolsChanged,
    "SESSION_START": SessionStart,
    "SESSION_END": SessionEnd,
    "PING": Ping,
    "PONG": Pong,
    "CLIENT_CAPABILITIES": ClientCapabilities,
    "SAMPLE": Sample,
    "SAMPLE_RESULT": SampleResult,
    "ERROR": Error,
}

# ---------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------

texts = st.text(max_size=30)
ids = st.text(min_size=1, max_size=16)
pids = st.integers(min_value=0, max_value=2**31 - 1)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)

# Anything a `dict[str, Any]` / `Any` field may carry and get back equal: msgpack ints are 64-bit.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | finite_floats
    | texts
    | st.binary(max_size=32)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(texts, json_values, max_size=5)

client_infos = st.builds(ClientInfo, name=texts, version=texts, pid=pids)
daemon_infos = st.builds(DaemonInfo, version=texts, pid=pids, protocol=texts)
tool_specs = st.builds(
    ToolSpec,
    name=ids,
    description=texts,
    input_schema=json_objects,
    group=texts,
    title=st.none() | texts,
    output_schema=st.none() | json_objects,
    annotations=st.none() | json_objects,
)
error_infos = st.builds(ErrorInfo, error=texts, error_code=texts, recover_hint=texts, details=json_objects)
contents: st.SearchStrategy[Content] = st.builds(TextContent, text=texts) | st.builds(
    ImageContent, data=st.binary(max_size=256), mime_type=st.sampled_from(["image/png", "image/jpeg", ""]) | texts
)
payloads = st.builds(
    Payload,
    success=st.booleans(),
    data=json_values,
    content=st.lists(contents, max_size=4),
    error=st.none() | error_infos,
)
trust_levels = st.sampled_from(["local", "remote"])

# One strategy per Struct of the Message union, keyed by class so coverage of the union is checkable.
MESSAGE_STRATEGIES: dict[type[Any], st.SearchStrategy[Any]] = {
    Register: st.builds(
        Register,
        id=ids,
        protocol=texts,
        client=client_infos,
        role=st.sampled_from(["shim", "control"]),
        trust_level=trust_levels,
        profile_id=st.none() | texts,
        tools=st.none() | st.lists(texts, max_size=4),
    ),
    RegisterOk: st.builds(
        RegisterOk,
        id=ids,
        session_id=ids,
        daemon=daemon_infos,
        trust_level=trust_levels,
        tools=st.lists(tool_specs, max_size=3),
    ),
    Request: st.builds(Request, id=ids, session_id=ids, action=texts, params=json_objects),
    Response: st.builds(Response, id=ids, session_id=ids, payload=payloads),
    Event: st.builds(
        Event,
        id=ids,
        kind=st.sampled_from(["progress", "log"]),
        progress=finite_floats,
        total=st.none() | finite_floats,
        message=st.none() | texts,
    ),
    Cancel: st.builds(Cancel, id=ids),
    ToolsChanged: st.builds(ToolsChanged, tools=st.lists(tool_specs, max_size=3)),
    SessionStart: st.builds(SessionStart, session_id=ids),
    SessionEnd: st.builds(SessionEnd, session_id=ids),
    Ping: st.builds(Ping, id=ids),
    Pong: st.builds(Pong, id=ids),
    ClientCapabilities: st.builds(ClientCapabilities, sampling=st.booleans()),
    Sample: st.builds(Sample, id=ids, request=json_objects),
    SampleResult: st.builds(SampleResult, id=ids, result=st.none() | json_objects, error=st.none() | error_infos),
    Error: st.builds(Error, error=error_infos, id=st.none() | ids),
}
messages: st.SearchStrategy[Message] = st.one_of(*MESSAGE_STRATEGIES.values())

# Arbitrary msgpack-encodable objects, for "valid msgpack, any shape" fuzzing.
wire_keys = (
    st.sampled_from(
        [
            "type",
            "id",
            "sessionId",
            "session_id",
            "protocol",
            "client",
            "action",
            "params",
            "payload",
            "tools",
            "daemon",
            "kind",
            "progress",
            "total",
            "message",
            "error",
            "trustLevel",
            "profileId",
            "role",
            "success",
            "data",
            "content",
        ]
    )
    | texts
)
msgpack_values = st.recursive(
    scalars | st.sampled_from(list(TAGS)),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(wire_keys, children, max_size=6),
    max_leaves=20,
)
shaped_objects = st.builds(
    lambda tag, rest: {"type": tag, **rest},
    st.sampled_from([*TAGS, "NOPE", "request", ""]),
    st.dictionaries(wire_keys, msgpack_values, max_size=6),
)


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------


def _reader(data: bytes, *, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


def read_one(data: bytes, max_bytes: int = DEFAULT_MAX_FRAME_BYTES, *, eof: bool = True) -> Message:
    """One read_frame over an in-memory stream; a hang surfaces as TimeoutError."""

    async def go() -> Message:
        return await asyncio.wait_for(read_frame(_reader(data, eof=eof).readexactly, max_bytes), READ_TIMEOUT_S)

    return asyncio.run(go())


def read_stream(data: bytes, max_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> tuple[list[Message], BaseException]:
    """Read frames as the daemon does (skip bad frames, stop on a fatal one or end of data)."""

    async def go() -> tuple[list[Message], BaseException]:
        reader = _reader(data)
        got: list[Message] = []
        while True:
            try:
                got.append(await read_frame(reader.readexactly, max_bytes))
            except FrameError as exc:
                if exc.fatal:
                    return got, exc
            except asyncio.IncompleteReadError as exc:
                return got, exc

    return asyncio.run(asyncio.wait_for(go(), READ_TIMEOUT_S))


def assert_decodes_or_soft_error(body: bytes) -> None:
    try:
        message = decode_body(body)
    except FrameError as exc:
        assert exc.fatal is False
    else:
        assert isinstance(message, tuple(TAGS.values()))


def encode_body_frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def nested_request_body(depth: int) -> bytes:
    """A REQUEST whose params hold a list nested `depth` deep: a tiny frame (about depth bytes)."""
    head = msgspec.msgpack.encode({"type": "REQUEST", "id": "1", "sessionId": "s", "action": "a"})
    # Turn the 4-entry fixmap into a 5-entry one and append `params: {"k": [[[...None...]]]}`.
    assert head[0] == 0x84
    return b"\x85" + head[1:] + msgspec.msgpack.encode("params") + b"\x81\xa1k" + b"\x91" * depth + b"\xc0"


# ---------------------------------------------------------------------------------------------------
# 1. Round trips
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(TAGS.values()), ids=list(TAGS))
@settings(EXAMPLES, max_examples=50)
@given(data=st.data())
def test_every_message_round_trips(cls: type[Any], data: st.DataObject) -> None:
    message = data.draw(MESSAGE_STRATEGIES[cls], label="message")
    assert type(message) is cls
    frame = encode_frame(message)
    (length,) = HEADER.unpack(frame[: HEADER.size])
    assert length == len(frame) - HEADER.size
    assert decode_body(frame[HEADER.size :]) == message
    assert read_one(frame) == message


@EXAMPLES
@given(batch=st.lists(messages, min_size=1, max_size=5))
def test_back_to_back_frames_are_read_in_order(batch: list[Message]) -> None:
    got, end = read_stream(b"".join(encode_frame(m) for m in batch))
    assert got == batch
    assert isinstance(end, asyncio.IncompleteReadError)
    assert end.partial == b""


def test_every_tag_in_the_union_has_a_strategy() -> None:
    union = set(typing.get_args(Message))
    assert set(MESSAGE_STRATEGIES) == union
    assert set(TAGS.values()) == union
    for tag, cls in TAGS.items():
        assert cls.__struct_config__.tag == tag
        assert cls.__struct_config__.tag_field == "type"


@pytest.mark.parametrize(
    ("message", "wire"),
    [
        (Ping(id="1"), {"type": "PING", "id": "1"}),
        (Cancel(id="7"), {"type": "CANCEL", "id": "7"}),
        (SessionEnd(session_id="s"), {"type": "SESSION_END", "sessionId": "s"}),
        (
            Request(id="1", session_id="s", action="navigate", params={"url": "x"}),
            {"type": "REQUEST", "id": "1", "sessionId": "s", "action": "navigate", "params": {"url": "x"}},
        ),
        (
            Register(id="1", protocol="1.0", client=ClientInfo(name="c"), trust_level="remote", profile_id="p"),
            {
                "type": "REGISTER",
                "id": "1",
                "protocol": "1.0",
                "client": {"name": "c"},
                "trustLevel": "remote",
                "profileId": "p",
            },
        ),
        (
            Response(
                id="1",
                session_id="s",
                payload=Payload(
                    success=False,
                    content=[ImageContent(data=b"\x89PNG", mime_type="image/png")],
                    error=ErrorInfo(error="boom", error_code="E", recover_hint="retry"),
                ),
            ),
            {
                "type": "RESPONSE",
                "id": "1",
                "sessionId": "s",
                "payload": {
                    "success": False,
                    "content": [{"type": "image", "data": b"\x89PNG", "mimeType": "image/png"}],
                    "error": {"error": "boom", "errorCode": "E", "recoverHint": "retry", "details": {}},
                },
            },
        ),
    ],
)
def test_wire_names_are_the_documented_tags_and_camel_case_keys(message: Message, wire: dict[str, Any]) -> None:
    assert msgspec.msgpack.decode(encode_frame(message)[HEADER.size :]) == wire


def test_unknown_fields_from_a_newer_minor_are_ignored() -> None:
    body = msgspec.msgpack.encode({"type": "PING", "id": "1", "someFutureField": [1, 2, 3]})
    assert decode_body(body) == Ping(id="1")


# ---------------------------------------------------------------------------------------------------
# 2. Garbage never crashes and never hangs
# ---------------------------------------------------------------------------------------------------


@EXAMPLES
@given(body=st.binary(max_size=512))
def test_random_body_is_a_decode_error_never_a_crash(body: bytes) -> None:
    assert_decodes_or_soft_error(body)


@EXAMPLES
@given(obj=msgpack_values | shaped_objects)
def test_any_msgpack_value_is_a_message_or_a_soft_decode_error(obj: Any) -> None:
    assert_decodes_or_soft_error(msgspec.msgpack.encode(obj))


@EXAMPLES
@given(message=messages, data=st.data())
def test_corrupted_valid_body_is_a_message_or_a_soft_decode_error(message: Message, data: st.DataObject) -> None:
    body = bytearray(encode_frame(message)[HEADER.size :])
    for _ in range(data.draw(st.integers(1, 4), label="edits")):
        pos = data.draw(st.integers(0, len(body)), label="pos")
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]), label="op")
        if op == "insert" or pos == len(body):
            body.insert(pos, data.draw(st.integers(0, 255), label="byte"))
        elif op == "flip":
            body[pos] ^= data.draw(st.integers(1, 255), label="mask")
        else:
            del body[pos]
    assert_decodes_or_soft_error(bytes(body))


@EXAMPLES
@given(stream=st.binary(max_size=512), max_bytes=st.sampled_from([0, 16, 1024, DEFAULT_MAX_FRAME_BYTES]))
def test_random_stream_yields_messages_then_ends_cleanly(stream: bytes, max_bytes: int) -> None:
    got, end = read_stream(stream, max_bytes)
    assert all(isinstance(m, tuple(TAGS.values())) for m in got)
    assert isinstance(end, FrameError | asyncio.IncompleteReadError)
    if isinstance(end, FrameError):
        assert end.fatal is True


@EXAMPLES
@given(stream=st.binary(max_size=512))
def test_random_stream_single_read_is_message_frame_error_or_end_of_data(stream: bytes) -> None:
    try:
        message = read_one(stream)
    except (FrameError, asyncio.IncompleteReadError):
        pass
    else:
        assert isinstance(message, tuple(TAGS.values()))


@EXAMPLES
@given(message=messages, garbage=st.binary(max_size=64))
def test_bad_frame_does_not_desync_the_stream(message: Message, garbage: bytes) -> None:
    bad = HEADER.pack(len(garbage)) + garbage
    try:
        decode_body(garbage)
    except FrameError:
        expected = [message]
    else:
        expected = [decode_body(garbage), message]
    got, end = read_stream(bad + encode_frame(message))
    assert got == expected
    assert isinstance(end, asyncio.IncompleteReadError)


def test_empty_body_is_a_soft_decode_error() -> None:
    with pytest.raises(FrameError) as caught:
        read_one(HEADER.pack(0))
    assert caught.value.fatal is False


def test_deeply_nested_body_is_a_soft_decode_error() -> None:
    # ~5 KB frame: far below any size limit, yet nests deeper than the interpreter's recursion limit.
    with pytest.raises(FrameError) as caught:
        read_one(encode_body_frame(nested_request_body(5000)))
    assert caught.value.fatal is False


@pytest.mark.parametrize(
    "body",
    [
        b"\x81\xa4type\xa1\xff",  # {"type": <str 0xff>}
        b"\x82\xa4type\xa4PING\xa2id\xa1\xff",  # {"type": "PING", "id": <str 0xff>}
    ],
    ids=["tag", "field"],
)
def test_invalid_utf8_string_is_a_soft_decode_error(body: bytes) -> None:
    with pytest.raises(FrameError) as caught:
        read_one(encode_body_frame(body))
    assert caught.value.fatal is False


def test_moderately_nested_body_still_decodes() -> None:
    message = decode_body(nested_request_body(100))
    assert isinstance(message, Request)


# ---------------------------------------------------------------------------------------------------
# 3. Truncation
# ---------------------------------------------------------------------------------------------------


@EXAMPLES
@given(message=messages, data=st.data())
def test_truncated_frame_is_end_of_data(message: Message, data: st.DataObject) -> None:
    frame = encode_frame(message)
    cut = data.draw(st.integers(min_value=0, max_value=len(frame) - 1), label="cut")
    with pytest.raises(asyncio.IncompleteReadError):
        read_one(frame[:cut])


@pytest.mark.parametrize("message", [Ping(id="1"), Request(id="1", session_id="s", action="a", params={"k": [1]})])
def test_every_cut_of_a_frame_is_end_of_data(message: Message) -> None:
    frame = encode_frame(message)
    for cut in range(len(frame)):
        with pytest.raises(asyncio.IncompleteReadError):
            read_one(frame[:cut])


# ---------------------------------------------------------------------------------------------------
# 4. Oversized frames
# ---------------------------------------------------------------------------------------------------


@EXAMPLES
@given(length=st.integers(min_value=1025, max_value=2**32 - 1))
def test_oversized_header_is_fatal_without_reading_the_body(length: int) -> None:
    requested: list[int] = []

    async def go() -> Message:
        reader = _reader(HEADER.pack(length), eof=False)  # no body, no EOF: reading on would hang

        async def read_exactly(n: int) -> bytes:
            requested.append(n)
            return await reader.readexactly(n)

        return await asyncio.wait_for(read_frame(read_exactly, max_bytes=1024), READ_TIMEOUT_S)

    with pytest.raises(FrameError) as caught:
        asyncio.run(go())
    assert caught.value.fatal is True
    assert requested == [HEADER.size]


@EXAMPLES
@given(length=st.integers(min_value=0, max_value=2**32 - 1), max_bytes=st.integers(min_value=0, max_value=2**32))
def test_frame_length_refuses_exactly_what_exceeds_the_limit(length: int, max_bytes: int) -> None:
    header = HEADER.pack(length)
    if length > max_bytes:
        with pytest.raises(FrameError) as caught:
            frame_length(header, max_bytes)
        assert caught.value.fatal is True
    else:
        assert frame_length(header, max_bytes) == length


def test_frame_at_exactly_the_limit_is_accepted() -> None:
    frame = encode_frame(Ping(id="x"))
    limit = len(frame) - HEADER.size
    assert read_one(frame, max_bytes=limit) == Ping(id="x")
    with pytest.raises(FrameError) as caught:
        read_one(frame, max_bytes=limit - 1)
    assert caught.value.fatal is True


# ---------------------------------------------------------------------------------------------------
# 5. Valid msgpack, wrong shape
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"type": "NOPE"},
        {"type": "REQUEST"},
        {"type": "REQUEST", "id": "1", "session_id": "s", "action": "a"},  # snake_case is not the wire name
        {"type": "REQUEST", "id": 1, "sessionId": "s", "action": "a"},
        {"type": "REQUEST", "id": "1", "sessionId": "s", "action": "a", "params": [1, 2]},
        {"type": "REGISTER", "id": "1", "protocol": "1.0", "client": {"name": "c"}, "trustLevel": "everyone"},
        {"type": "EVENT", "id": "1", "kind": "shout"},
        {"type": "RESPONSE", "id": "1", "sessionId": "s", "payload": {"success": True, "content": [{"type": "video"}]}},
        {"type": "request", "id": "1"},
        {"type": None},
        {"type": 3},
        {"id": "1"},
        {},
        ["PING", "1"],
        [],
        "PING",
        42,
        None,
        b"\x00",
    ],
    ids=repr,
)
def test_wrong_shape_is_a_soft_decode_error(obj: Any) -> None:
    body = msgspec.msgpack.encode(obj)
    with pytest.raises(FrameError) as caught:
        decode_body(body)
    assert caught.value.fatal is False
    with pytest.raises(FrameError) as caught:
        read_one(encode_body_frame(body))
    assert caught.value.fatal is False


def test_trailing_bytes_after_a_message_are_a_soft_decode_error() -> None:
    body = encode_frame(Ping(id="1"))[HEADER.size :] + b"\xc0"
    with pytest.raises(FrameError) as caught:
        decode_body(body)
    assert caught.value.fatal is False


# ---------------------------------------------------------------------------------------------------
# 6. Protocol version
# ---------------------------------------------------------------------------------------------------


def test_protocol_version_is_major_dot_minor() -> None:
    assert re.fullmatch(r"\d+\.\d+", PROTOCOL_VERSION)
    assert DaemonInfo(version="x", pid=1).protocol == PROTOCOL_VERSION


@EXAMPLES
@given(major=st.integers(min_value=0, max_value=10**6), minor=st.integers(min_value=0, max_value=10**6))
def test_protocol_major_is_the_part_before_the_first_dot(major: int, minor: int) -> None:
    assert protocol_major(f"{major}.{minor}") == str(major)
    assert protocol_major(f"{major}.{minor}.7") == str(major)
    assert protocol_major(str(major)) == str(major)


def test_protocol_major_of_this_version() -> None:
    assert protocol_major(PROTOCOL_VERSION) == PROTOCOL_VERSION.split(".")[0]
    assert protocol_major("1.9") == protocol_major("1.0")
    assert protocol_major("2.0") != protocol_major("1.0")
