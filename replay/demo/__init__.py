"""`p2w-rt demo`: the replay side of the product on recorded runs, ending in a Markdown report with plots.

Imports the bundled example runs (an "earlier" and a "later" recording of the sample tasks), judges them
with ``rubric-rules`` (and ``rubric-llm`` on runs named for it), classifies their errors, diffs the two,
prints each view and writes ``report.md`` with the plots next to the database.
"""

from p2w_rt.replay.demo._prepare import (
    LLM_JUDGE,
    RULES_JUDGE,
    DemoData,
    DemoReport,
    demo_data,
    import_example_runs,
    prepare_demo_db,
    write_report,
)

__all__ = [
    "LLM_JUDGE",
    "RULES_JUDGE",
    "DemoData",
    "DemoReport",
    "demo_data",
    "import_example_runs",
    "prepare_demo_db",
    "write_report",
]
