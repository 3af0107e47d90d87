"""How large an LLM answer may be: the HTTP client reads a whole body into memory, so an endpoint sending an endless
or enormous one would fill it. Every body (answers and error bodies alike) is counted as it arrives and refused past
the limit; a declared ``Content-Length`` over it is refused before anything is read.

How long an attempt may take is ``LlmClient``'s deadline around the whole call (``asyncio.timeout``): the HTTP
client's timeout is per read, which a server trickling a byte at a time never reaches. Imported with the client's
``openai`` (``LlmClient.__init__``), so that a command that never calls a model never loads its HTTP library.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import openai

from p2w_runtime.llm._request import BadResponse


def capped_http_client(max_bytes: int) -> httpx2.AsyncClient:
    """openai's HTTP client, with every response body limited to ``max_bytes``.

    Answers are asked for uncompressed (``Accept-Encoding: identity``), so the bytes counted on the wire are the
    bytes kept in memory.
    """

    async def plain(request: httpx2.Request) -> None:
        request.headers["Accept-Encoding"] = "identity"

    async def capped(response: httpx2.Response) -> None:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise BadResponse(f"the answer declares {int(declared)} bytes, over the {_size(max_bytes)} limit; not read")
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an async client's responses stream so
        response.stream = _Capped(response.stream, max_bytes)

    return openai.DefaultAsyncHttpxClient(event_hooks={"request": [plain], "response": [capped]})


class _Capped(httpx2.AsyncByteStream):
    """A response body that stops with ``BadResponse`` once more than ``max_bytes`` have come."""

    def __init__(self, stream: httpx2.AsyncByteStream, max_bytes: int) -> None:
        self._stream = stream
        self._max_bytes = max_bytes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._stream:
            read += len(chunk)
            if read > self._max_bytes:
                raise BadResponse(f"the answer is over the {_size(self._max_bytes)} limit; not read further")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n} bytes"
