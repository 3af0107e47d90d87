"""`demo-model serve`: the scripted OpenAI-compatible model on a port, so `record`, `fork`, `demo --record` and the
LLM judges can be tried without a key.

It is a script, not a model. Agent calls (planner, generator, pre-execution, rewrite) get the answers the project's
sample agent scripts for the bundled sample tasks (``p2w_runtime.testing.sample_agent``, what the example runs
were recorded with), Browser-Use's planner calls the same in its structured format (``browser_use_script``).
Structured calls (judges, the LLM classifier, any agent asking for a JSON schema) get an answer built from the
schema they send: every score its highest allowed value, empty evidence lists, and text saying it is scripted.
Any other request (an outside agent's, ``record --exec``) gets the generic scripted answer in the shape it asks for:
a call of its first tool, with arguments built from that tool's schema, when it offers tools and its last message
is not a tool's result; else a plain text saying it is scripted. Token usage is estimated (4 characters a token).
"""

from __future__ import annotations

import errno
import json
import signal
import sys
import threading
from typing import Any

import click

from p2w_cli._options import FiniteFloat
from p2w_runtime.errors import UserError

MODEL = "scripted-model"
SCRIPTED_NOTE = "scripted demo model: a fixed reply, not a judgment"
GENERIC_NOTE = "scripted demo model: a fixed reply for any request, not a model's answer"
_TOOL_RESULTS = ("tool", "function")
"""Roles and item types of a tool's result: a request ending in one gets text, so an agent's tool loop ends."""


def schema_answer(schema: dict[str, Any], node: dict[str, Any] | None = None) -> Any:
    """A value of the JSON schema ``node`` (pydantic's ``model_json_schema``: ``$ref`` into ``$defs``)."""
    node = schema if node is None else node
    if "$ref" in node:
        return schema_answer(schema, schema["$defs"][node["$ref"].rsplit("/", 1)[-1]])
    if "const" in node:
        return node["const"]
    if "enum" in node:
        numbers = [v for v in node["enum"] if isinstance(v, int | float) and not isinstance(v, bool)]
        return max(numbers) if numbers else node["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            options = [o for o in node[key] if o.get("type") != "null"] or node[key]
            return schema_answer(schema, options[0])
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        return {name: schema_answer(schema, sub) for name, sub in node.get("properties", {}).items()}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return node.get("maximum", node.get("minimum", 0))
    if kind == "null":
        return None
    return SCRIPTED_NOTE


class DemoModelScript:
    """The handler of ``ScriptedLlm.handle_with``: structured calls from their schema, agent calls from the sample
    agent's script."""

    def __init__(self, latency: float = 0.0) -> None:
        from p2w_runtime.data import load_tasks
        from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
        from p2w_runtime.testing.browser_use_script import BrowserUseSampleScript

        self._agent = BrowserUseSampleScript(load_tasks(sample_tasks_dir()), sample_checks())
        self._latency = latency

    def __call__(self, request: dict[str, Any]) -> Any:
        from p2w_runtime.testing import Delay

        answer = self._answer(request)
        return Delay(self._latency, answer) if self._latency > 0 else answer

    def _answer(self, request: dict[str, Any]) -> Any:
        from p2w_runtime.testing.browser_use_script import is_browser_use

        response_format = request.get("response_format")
        structured = isinstance(response_format, dict) and response_format.get("type") == "json_schema"
        if is_browser_use(request) or (self._agent.own.knows(request) and not structured):
            try:
                return self._agent(request)
            except (KeyError, AttributeError):  # a task the script does not know, a prompt without a task
                pass
        return generic_answer(request)


def generic_answer(request: dict[str, Any]) -> Any:
    """Any request's scripted answer in the shape it asks for: a call of its first tool (unless it ends in a tool's
    result), an object of its JSON schema, or text; each says it is scripted where it holds text."""
    from p2w_runtime.testing import Text, ToolCall

    tools = [t.get("function", t) for t in request.get("tools") or [] if isinstance(t, dict)]
    last = (request.get("messages") or [{}])[-1]
    answered = isinstance(last, dict) and (last.get("role") in _TOOL_RESULTS or "output" in last)
    if tools and request.get("tool_choice") != "none" and not answered and isinstance(tools[0].get("name"), str):
        parameters = tools[0].get("parameters") or {"type": "object"}
        return ToolCall(tools[0]["name"], json.dumps(schema_answer(parameters)))
    response_format = request.get("response_format") or (request.get("text") or {}).get("format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", response_format).get("schema", {})
        return Text(json.dumps(schema_answer(schema)))
    return Text(GENERIC_NOTE)


@click.group("demo-model")
def demo_model() -> None:
    """A scripted stand-in for an OpenAI-compatible model, to try the LLM parts without a key."""


@demo_model.command("serve")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--latency",
    default=0.0,
    show_default=True,
    type=FiniteFloat(0, 600),
    metavar="SECONDS",
    help="Answer each call after this long, as a hosted model would (to watch a run in `view` as it is recorded).",
)
def serve_cmd(port: int, host: str, latency: float) -> None:
    """Serve the scripted model at http://HOST:PORT/v1 until Ctrl-C.

    A script, not a model: the agent's calls get the sample agent's answers for the bundled sample tasks
    (`record --tasks sample`), judges and the LLM classifier get the highest score of every criterion with a note
    saying it is scripted, and any other agent's call (`record --exec`) a fixed answer in the shape it asks for
    (text, its JSON schema, a call of its first tool). Any --model name is answered.
    """
    from p2w_cli._common import fail_as_one_line
    from p2w_runtime.testing import ScriptedLlm

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # before the banner: whoever read it may stop us at once
    server = ScriptedLlm(models=(MODEL,), host=host, port=port, keep_requests=False)
    server.handle_with(DemoModelScript(latency))
    fail_as_one_line(lambda: _start(server, host, port))
    try:
        url = server.base_url
        click.echo(f"demo model at {url}, model {MODEL}: a script, not a model (the sample agent's answers for")
        click.echo("the bundled sample tasks; judges get the highest score of every criterion). Try:")
        click.echo(f"  p2w-rt record --base-url {url} --model {MODEL} --level 2 --limit 2 --label try-demo")
        click.echo(f"  p2w-rt replay try-demo --judge rubric-llm --base-url {url} --model {MODEL}")
        click.echo("Ctrl-C stops it.")
        sys.stdout.flush()  # a pipe is block-buffered: whoever reads the URL must get it now
        _wait_for_stop(stop)
    finally:
        server.stop_thread()
    click.echo("demo model stopped", err=True)


def _start(server: Any, host: str, port: int) -> None:
    try:
        server.start_in_thread()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UserError(f"port {port} on {host} is in use: stop what listens there or give --port N") from None
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _wait_for_stop(stop: threading.Event) -> None:
    """Until Ctrl-C or SIGTERM (``stop`` set); both end in a clean stop (exit 0, port released)."""
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
