"""An OpenAI-compatible server on 127.0.0.1 that misbehaves as a network can: per request it answers, trickles a
byte at a time and never finishes, or floods a body far larger than any answer (``Trickle``, ``Flood``), or streams
the first words of an answer as server-sent events and then does either (``Streamed``), or compresses an answer
although asked not to (``Compressed``). It counts the bytes of body it managed to send, so a test sees how much a
client read before it stopped.

Hosted on its own thread, like the scripted server, so that a ``p2w-rt`` process can call it.
"""

from __future__ import annotations

import asyncio
import json
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CHUNK = b"x" * 65536


@dataclass(frozen=True)
class Trickle:
    """Headers at once, then one byte of body every ``every_s`` seconds, for ever."""

    every_s: float = 0.2


@dataclass(frozen=True)
class Flood:
    """A 200 whose body is ``size`` bytes, sent as fast as the client reads; ``declared`` says so in Content-Length
    (else the body is chunked and its size unknown until it ends)."""

    size: int
    declared: bool = False


@dataclass(frozen=True)
class Streamed:
    """A streamed chat completion (``text/event-stream``, chunked): one event per word of ``text``, then ``then``
    midway through the answer: a stall (a byte of a next event at a time) or a flood (one endless event)."""

    text: str
    then: Trickle | Flood


@dataclass(frozen=True)
class Compressed:
    """A chat completion with ``text`` under ``Content-Encoding: encoding``, compressed by zlib with ``wbits`` (31:
    gzip, 15: zlib, -15: raw deflate) and followed by ``padding`` MiB of spaces, which inflate past any limit."""

    text: str
    encoding: str = "deflate"
    wbits: int = zlib.MAX_WBITS
    padding: int = 0

    def body(self) -> bytes:
        squeeze = zlib.compressobj(9, zlib.DEFLATED, self.wbits)
        spaces = b" " * 2**20
        compressed = [squeeze.compress(_completion(self.text))]
        compressed += [squeeze.compress(spaces) for _ in range(self.padding)]
        return b"".join(compressed) + squeeze.flush()


Answer = str | Trickle | Flood | Streamed | Compressed
"""A str is a normal chat completion with that text."""


class StallingLlm:
    """``answer(n, request)`` decides how the ``n``-th request (from 0) is answered."""

    def __init__(self, answer: Callable[[int, dict[str, Any]], Answer]) -> None:
        self.answer = answer
        self.requests = 0
        self.body_bytes_sent: list[int] = []
        """Per flooded request: the bytes of body written before the client stopped reading (or all of them)."""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> StallingLlm:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while request := await _read_request(reader):
                n, self.requests = self.requests, self.requests + 1
                answer = self.answer(n, request)
                if isinstance(answer, str):
                    await _complete(writer, _completion(answer))
                elif isinstance(answer, Compressed):
                    await _complete(writer, answer.body(), f"content-encoding: {answer.encoding}\r\n")
                elif isinstance(answer, Trickle):
                    await _trickle(writer, answer)
                elif isinstance(answer, Flood):
                    await self._flood(writer, answer)
                    return
                else:
                    await self._streamed(writer, answer)
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client gave up: what it is for
        finally:
            writer.close()

    async def _flood(self, writer: asyncio.StreamWriter, flood: Flood) -> None:
        length = f"content-length: {flood.size}" if flood.declared else "transfer-encoding: chunked"
        writer.write(f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{length}\r\n\r\n".encode())
        await self._pour(writer, flood)

    async def _pour(self, writer: asyncio.StreamWriter, flood: Flood) -> None:
        sent = 0
        try:
            while sent < flood.size:
                writer.write(CHUNK if flood.declared else b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
                await writer.drain()
                sent += len(CHUNK)
            if not flood.declared:
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        finally:
            self.body_bytes_sent.append(sent)

    async def _streamed(self, writer: asyncio.StreamWriter, streamed: Streamed) -> None:
        writer.write(_head("text/event-stream"))
        for word in streamed.text.split():
            delta = {"role": "assistant", "content": f"{word} "}
            chunk = {**_ANSWER, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
            event = b"data: " + json.dumps(chunk).encode() + b"\n\n"
            writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        await writer.drain()
        if isinstance(streamed.then, Trickle):
            await _drip(writer, streamed.then)
        else:
            await self._pour(writer, Flood(streamed.then.size))  # chunked, as the stream is


async def _read_request(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None  # the client closed a kept-alive connection
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    body = await reader.readexactly(length)
    return json.loads(body) if body else {}


_ANSWER = {"id": "chatcmpl-stalling", "created": 0, "model": "stalling"}


def _head(content_type: str) -> bytes:
    return f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n".encode()


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            **_ANSWER,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        }
    ).encode()


async def _complete(writer: asyncio.StreamWriter, body: bytes, headers: str = "") -> None:
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{headers}content-length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()


async def _trickle(writer: asyncio.StreamWriter, trickle: Trickle) -> None:
    writer.write(_head("application/json"))
    await _drip(writer, trickle)


async def _drip(writer: asyncio.StreamWriter, trickle: Trickle) -> None:
    while True:
        writer.write(b"1\r\n \r\n")
        await writer.drain()
        await asyncio.sleep(trickle.every_s)
