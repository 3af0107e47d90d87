"""`verify`, `export`, `import`: check the hash chains, and move runs between stores without trusting the bundle."""

from __future__ import annotations

import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from p2w_cli._common import echo_json, fail_as_one_line, open_db, run, terminal_progress
from p2w_cli._options import FC
from p2w_cli.render.bundle_import import import_report
from p2w_cli.render.export import export_report
from p2w_cli.render.terminal import safe
from p2w_cli.render.verify import verify_json, verify_lines
from p2w_rt.replay.exports import EXPORT_FORMATS, ExportRequest

_json_option = click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")


def _trusted_key_option(help_text: str) -> Callable[[FC], FC]:
    """``--trusted-key``: the Ed25519 PEM public key ``verify`` and ``import`` trust, each for its own check."""
    return click.option("--trusted-key", metavar="PUBKEY", type=click.Path(path_type=Path), help=help_text)


@click.command()
@click.argument("run_ref", metavar="[RUN]", required=False)
@click.option("--head", is_flag=True, help="Print the run's head digest, to publish with its results.")
@click.option("--expect", metavar="DIGEST", help="Fail unless the run's head digest is DIGEST (from --head).")
@click.option("--full", is_flag=True, help="Check every event, not only those after the last verify mark.")
@click.option(
    "--sign-key",
    metavar="KEYFILE",
    type=click.Path(path_type=Path),
    help="Sign the verify mark this check appends with this Ed25519 PEM key.",
)
@_trusted_key_option(
    "Start after the last verify mark only if this Ed25519 PEM public key signed it (else check in full)."
)
@_json_option
@click.option(
    "--rebuild-summaries", is_flag=True, help="First drop the run and episode summaries and build them from the log."
)
@click.pass_context
def verify(
    ctx: click.Context,
    run_ref: str | None,
    head: bool,
    expect: str | None,
    full: bool,
    sign_key: Path | None,
    trusted_key: Path | None,
    as_json: bool,
    rebuild_summaries: bool,
) -> None:
    """Recompute every hash chain and blob hash and check every seal (of one run, or the whole store); count, per
    run, the events no seal covers yet (an episode being recorded); check the run and episode summaries the
    listings read against the log (a run's check, and a full one).

    The whole store is checked after the last verify mark (what the previous check of the whole store that found
    nothing wrong appended): the events since in full, those before by their streams' heads and counts, the
    summaries not (they are folded from the whole log); --full checks every event and the summaries. A check that
    finds nothing wrong appends a new mark (unless the store is read-only)."""
    from p2w_runtime.store import (
        LIFECYCLE_TYPES,
        Problem,
        append_mark,
        head_digest,
        same_digest,
        verify_store,
        verify_whole_store,
    )

    if (head or expect) and not run_ref:
        raise click.UsageError("--head and --expect need a RUN")
    if (sign_key or trusted_key) and run_ref:
        raise click.UsageError("--sign-key and --trusted-key are for the whole store's check (a RUN's is always full)")

    async def _verify() -> Any:
        key = trusted = None
        if sign_key is not None or trusted_key is not None:  # cryptography, only for a signed check
            from p2w_runtime.store import load_private_key, load_public_key

            key = load_private_key(sign_key) if sign_key is not None else None
            trusted = load_public_key(trusted_key) if trusted_key is not None else None
        async with open_db(ctx) as store:
            if rebuild_summaries:
                from p2w_runtime.domain import rebuild_summaries as rebuild

                await rebuild(store)
            run_id = None
            if run_ref:
                from p2w_runtime.domain import find_run

                run_id = (await find_run(store, run_ref)).run_id
            if run_id is None:  # a full check keeps the events the summaries fold, so they are read once
                report = await verify_whole_store(store, full=full, trusted=trusted, key=key, collect=LIFECYCLE_TYPES)
            else:
                report = await verify_store(store, run_id)
            if not report.incremental:  # summaries are folded from the whole log: a full check's part
                from p2w_runtime.domain import Met, check_summaries  # the domain's models, only for a full check

                met = None
                if report.collected is not None and report.through is not None:
                    met = Met(report.through, report.collected)
                try:
                    for where, reason in await check_summaries(store, run_id, met):
                        report.problems.append(Problem(where, None, None, reason))
                except (TypeError, ValueError) as exc:  # a lifecycle event's field edited to what no row can hold
                    if report.ok:
                        raise
                    reason = f"the run and episode summaries: not checked, an event above cannot be folded ({exc})"
                    report.problems.append(Problem("summaries", None, None, reason))
            marked = run_id is None and await append_mark(store, report)
            return report, run_id, (await head_digest(store, run_id) if run_id else None), marked

    report, run_id, digest, marked = run(_verify())
    expected_ok = expect is None or same_digest(digest, expect)
    if as_json:
        echo_json(verify_json(report, run_id, digest, expect, ok=report.ok and expected_ok, marked=marked))
    else:
        if report.full_because is not None and trusted_key is not None:
            click.echo(f"full check: {report.full_because}", err=True)
        err, out = verify_lines(report, run_id, digest, None if expected_ok else expect, head=head, marked=marked)
        for line in err:
            click.echo(line, err=True)
        for line in out:
            click.echo(line)
    if not (report.ok and expected_ok):
        sys.exit(1)


def _format_help() -> str:
    return "; ".join(f"{f.name}: {f.help}" for f in EXPORT_FORMATS.values()) + "."


@click.command("export")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="The bundle or trace file, or a folder (otel: optional with --otlp-endpoint).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(EXPORT_FORMATS)),
    default=next(iter(EXPORT_FORMATS)),
    show_default=True,
    help=_format_help(),
)
@click.option(
    "--no-content",
    is_flag=True,
    help="otel: leave out prompts, responses and retrieved entries (gen_ai.input/output.messages).",
)
@click.option(
    "--encoding",
    type=click.Choice(["json", "protobuf"]),
    default="json",
    show_default=True,
    help="otel: the file's OTLP encoding: JSON lines (a TracesData per line), or protobuf (one TracesData message).",
)
@click.option(
    "--otlp-endpoint",
    metavar="URL",
    help="otel: also send the traces to this OTLP/HTTP collector (protobuf, a request per episode); "
    "/v1/traces is added to a URL without a path.",
)
@click.option(
    "--phoenix-annotations",
    is_flag=True,
    help="otel: also send the judgments to the --otlp-endpoint's Arize Phoenix as span annotations "
    "(its evaluations; OTLP carries them as span events only).",
)
@click.option("--force", is_flag=True, help="Replace OUTPUT if it exists.")
@click.option(
    "--sign", "sign_key", metavar="KEYFILE", type=click.Path(path_type=Path), help="Sign with this Ed25519 PEM key."
)
@_json_option
@click.pass_context
def export_cmd(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    output: Path | None,
    fmt: str,
    no_content: bool,
    encoding: str,
    otlp_endpoint: str | None,
    phoenix_annotations: bool,
    force: bool,
    sign_key: Path | None,
    as_json: bool,
) -> None:
    """Write a run (events + blobs) to a portable single-file bundle, optionally signed; or runs as Parquet tables,
    or as OpenTelemetry traces."""
    from p2w_runtime.domain import find_runs

    chosen = EXPORT_FORMATS[fmt]
    if sign_key is not None and fmt != "bundle":
        raise click.UsageError(f"--sign is for bundles; {fmt} output is not signed")
    if fmt != "otel" and (no_content or encoding != "json" or otlp_endpoint):
        raise click.UsageError("--no-content, --encoding and --otlp-endpoint are for --format otel")
    if phoenix_annotations and not otlp_endpoint:
        raise click.UsageError("--phoenix-annotations goes with --otlp-endpoint (the Phoenix the traces go to)")
    if output is None and not (fmt == "otel" and otlp_endpoint):
        raise click.UsageError("give -o/--output (or, for --format otel, --otlp-endpoint)")
    if chosen.one_run and len(run_refs) != 1:
        raise click.UsageError(f"a {fmt} holds one run; name one RUN (or use --format parquet)")
    url = _traces_url(otlp_endpoint) if otlp_endpoint else None

    async def _export() -> object:
        exporter = chosen.load()
        async with open_db(ctx) as store:
            runs = await find_runs(store, run_refs)
            with terminal_progress() as update:
                progress = (lambda done, total: update("exporting", done, total)) if update else None
                request = ExportRequest(
                    output, force=force, signing_key=sign_key, content=not no_content, protobuf=encoding == "protobuf",
                    endpoint=url, annotations=phoenix_annotations, progress=progress,
                )  # fmt: skip
                return await exporter(store, runs, request)

    as_object, line = export_report(fmt, run(_export()), output)
    if as_json:
        echo_json(as_object)
    else:
        click.echo(safe(line))


def _traces_url(endpoint: str) -> str:
    """The collector's traces URL: ``endpoint`` as given when it has a path, else with ``/v1/traces`` (OTLP/HTTP's
    default path, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes a base URL)."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.UsageError(f"--otlp-endpoint {endpoint!r} is not an http(s) URL")
    return endpoint if parts.path not in ("", "/") else endpoint.rstrip("/") + "/v1/traces"


@click.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@_trusted_key_option("Refuse the bundle unless it is signed by this Ed25519 PEM public key.")
@_json_option
@click.pass_context
def import_cmd(ctx: click.Context, bundle: Path, trusted_key: Path | None, as_json: bool) -> None:
    """Import a bundle written by `export`; every hash, seal and signature is verified first, nothing is duplicated.

    A bundle whose header names another run than its events, or whose signature does not verify, is refused
    before the database is opened. The output says whether the bundle was signed, and by which key.
    """
    from p2w_runtime.store import LabelTaken, StoreError, import_bundle, load_public_key, verify_bundle

    def _verify() -> Any:
        trusted = load_public_key(trusted_key) if trusted_key is not None else None
        return verify_bundle(bundle, trusted=trusted)

    verified = fail_as_one_line(_verify)

    async def _import() -> Any:
        async with open_db(ctx, create=True) as store:
            with terminal_progress() as update:
                progress = (lambda done, total: update("importing", done, total)) if update else None
                try:
                    return await import_bundle(store, verified, progress=progress)
                except LabelTaken as exc:  # its "choose another" is for `record --label`: a bundle keeps its label
                    raise StoreError(
                        f"{bundle}: label {exc.label!r} is already used by run {exc.holder} in {exc.where}, and an "
                        "imported run keeps its label: import the bundle into another database (--db)"
                    ) from None

    with verified:
        as_object, line = import_report(run(_import()))
    if as_json:
        echo_json(as_object)
    else:
        click.echo(line)
