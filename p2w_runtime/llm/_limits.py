"""How large an LLM answer may be: the HTTP client reads a whole body into memory, so an endpoint sending an endless
or enormous one would fill it. Every body (answers and error bodies alike) is counted as it arrives and refused past
the limit; a declared ``Content-Length`` over it is refused before anything is read. Answers are asked for
uncompressed; a server that compresses anyway (gzip, deflate: zlib's format, or raw deflate as many servers send
it) is counted in inflated bytes, which a few bytes on the wire could otherwise take past any limit, and another
encoding is refused unread.

How long an attempt may take is ``LlmClient``'s deadline around the whole call (``asyncio.timeout``): the HTTP
client's timeout is per read, which a server trickling a byte at a time never reaches. A client that is not an
``LlmClient`` (the recording proxy of ``record --exec``, a forked outside agent's live model) gets both limits from
its transport (``LimitedTransport``), per request. Imported with the client's ``openai`` (``LlmClient.__init__``), so
that a command that never calls a model never loads its HTTP library.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import AsyncIterator

import httpx2
import openai

from p2w_runtime.llm._request import MAX_REPLY_BYTES, BadResponse


def capped_http_client(max_bytes: int) -> httpx2.AsyncClient:
    """openai's HTTP client, with every response body limited to ``max_bytes``.

    Answers are asked for uncompressed (``Accept-Encoding: identity``), so the bytes counted on the wire are the
    bytes kept in memory.
    """

    async def plain(request: httpx2.Request) -> None:
        request.headers["Accept-Encoding"] = "identity"

    async def capped(response: httpx2.Response) -> None:
        encoding = _check_declared(response, max_bytes)
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's responses stream so
        response.stream = _Capped(response.stream, max_bytes, encoding=encoding)

    return openai.DefaultAsyncHttpxClient(event_hooks={"request": [plain], "response": [capped]})


class LimitedTransport(httpx2.AsyncBaseTransport):
    """``inner`` with each answer due whole (headers and body) within ``timeout_s`` of its request, else
    ``httpx2.ReadTimeout`` ("timeout after Ns", which the ``openai`` client retries as a timeout), and its body
    refused past ``max_bytes`` (``BadResponse``). Answers are asked for uncompressed, as ``capped_http_client``'s."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, *, timeout_s: float, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.inner = inner
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        late = f"timeout after {self.timeout_s:g}s"
        try:
            async with asyncio.timeout_at(deadline):
                response = await self.inner.handle_async_request(request)
        except TimeoutError:
            raise httpx2.ReadTimeout(late, request=request) from None
        try:
            encoding = _check_declared(response, self.max_bytes)
        except BadResponse:
            await response.aclose()
            raise
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async transport's responses stream so
        response.stream = _Capped(
            response.stream,
            self.max_bytes,
            (deadline, httpx2.ReadTimeout(late, request=request)),
            encoding=encoding,
        )
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


INFLATED = ("gzip", "deflate")
"""Encodings counted as they inflate (``zlib``); another one is refused unread."""


def _check_declared(response: httpx2.Response, max_bytes: int) -> str | None:
    """Refuse, before reading it, a body declared over ``max_bytes``, or one in an encoding that cannot be counted as
    it inflates; the body's encoding when it is compressed (and must be counted inflated)."""
    encodings = [e.strip().lower() for e in response.headers.get_list("content-encoding", split_commas=True)]
    encodings = [e for e in encodings if e not in ("", "identity")]
    if len(encodings) > 1 or (encodings and encodings[0] not in INFLATED):
        raise BadResponse(
            f"the answer is compressed ({', '.join(encodings)}) although asked for uncompressed; not read"
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise BadResponse(f"the answer declares {int(declared)} bytes, over the {_size(max_bytes)} limit; not read")
    return encodings[0] if encodings else None


class _Capped(httpx2.AsyncByteStream):
    """A response body that stops with ``BadResponse`` once more than ``max_bytes`` have come (counted inflated when
    it has an ``encoding``: the bytes the client will hold), and with the given error once the loop's clock passes the
    given deadline (``late``)."""

    def __init__(
        self,
        stream: httpx2.AsyncByteStream,
        max_bytes: int,
        late: tuple[float, Exception] | None = None,
        *,
        encoding: str | None = None,
    ) -> None:
        self._stream = stream
        self._max_bytes = max_bytes
        self._late = late
        self._inflate = _Inflation(encoding) if encoding else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        chunks = aiter(self._stream)
        while True:
            try:
                async with asyncio.timeout_at(None if self._late is None else self._late[0]):
                    chunk = await anext(chunks)
            except StopAsyncIteration:
                return
            except TimeoutError:
                assert self._late is not None
                raise self._late[1] from None
            read += len(chunk) if self._inflate is None else self._inflate.size(chunk, self._max_bytes - read)
            if read > self._max_bytes:
                raise BadResponse(f"the answer is over the {_size(self._max_bytes)} limit; not read further")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _Inflation:
    """How many bytes a compressed body inflates to, chunk by chunk; what it inflates is counted and dropped (the
    client inflates). ``deflate`` is zlib's format (RFC 9110), yet many servers send raw deflate under it and
    clients read both: when zlib refuses its first two bytes (a zlib header's length), it is inflated as raw deflate.
    """

    def __init__(self, encoding: str) -> None:
        self._inflate = zlib.decompressobj(32 + zlib.MAX_WBITS)  # 32: a gzip or zlib header, found by zlib
        self._head: bytes | None = b"" if encoding == "deflate" else None
        """A deflate body's bytes while fewer than two came: what raw deflate inflates again if zlib refuses them."""

    def size(self, chunk: bytes, budget: int) -> int:
        """What ``chunk`` inflates to, counted a MiB at a time and no further than just past ``budget``."""
        head = None if self._head is None else self._head + chunk
        self._head = head if head is not None and len(head) < 2 else None
        try:
            try:
                return _inflated_size(self._inflate, chunk, budget)
            except zlib.error:
                if head is None:
                    raise
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                return _inflated_size(self._inflate, head, budget)
        except zlib.error as exc:
            raise BadResponse(f"the compressed answer cannot be read ({exc}); not read further") from None


def _inflated_size(inflate: zlib._Decompress, chunk: bytes, budget: int) -> int:
    size, data = 0, chunk
    while data and size <= budget:
        size += len(inflate.decompress(data, 2**20))
        data = inflate.unconsumed_tail
    return size


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"
