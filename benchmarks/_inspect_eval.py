"""Run by ``bench_recorded_bytes.py`` with an interpreter that has ``inspect-ai``: write each run of a JSON-lines file
(stream, event id, type, time, cause, payload) as an Inspect ``.eval`` log through Inspect's own writer, one sample
per episode, each event an ``InfoEvent``; print the logs' total size in bytes."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from inspect_ai.event import InfoEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log


def main(source: Path, folder: Path) -> None:
    runs: dict[str, dict[str, list[list[object]]]] = defaultdict(lambda: defaultdict(list))
    for line in source.read_text().splitlines():
        item = json.loads(line)
        runs[item[0].split("/", 1)[0]][item[0]].append(item)
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for run_id, streams in runs.items():
        samples = [
            EvalSample(
                id=stream.split("/", 1)[1],
                epoch=1,
                input="",
                target="",
                events=[
                    InfoEvent(
                        uuid=str(event_id),
                        timestamp=str(at),
                        source=str(kind),
                        data=payload,
                        metadata={"cause": cause} if cause else None,
                    )
                    for _, event_id, kind, at, cause, payload in items
                ],
            )  # fmt: skip
            for stream, items in sorted(streams.items())
            if "/" in stream
        ]
        own = [item[2:] for item in streams.get(run_id, [])]
        spec = EvalSpec(
            created=str(own[0][1]) if own else "2026-01-01T00:00:00+00:00", task=run_id, model="recorded",
            dataset=EvalDataset(), config=EvalConfig(), metadata={"run_events": own},
        )  # fmt: skip
        path = folder / f"{run_id}.eval"
        write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), path, format="eval")
        total += path.stat().st_size
    print(total)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
