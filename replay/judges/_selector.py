"""``ID@VERSION``, how commands name one version of a judge (``replay.metrics.judge_label`` writes it), read back.

A judge's id may hold an ``@`` itself (a plugin's ``team@rubric``, an imported ``human:ann@lab``), so the text is
cut at its last ``@`` only when what follows is a version of the judge before it; else the whole text is the id.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from p2w_rt.replay.judges._family import JUDGES


def named_judge(text: str, recorded: Mapping[str, Collection[str]]) -> tuple[str, str | None]:
    """The judge id and version (None: any) ``text`` names, given the versions of each judge ``recorded`` on the
    run at hand; a version of the installed judge counts too, so a run nobody judged yet reads ``ID@VERSION`` alike.
    """
    judge_id, at, version = text.rpartition("@")
    if at and (version in recorded.get(judge_id, ()) or version == _installed_version(judge_id)):
        return judge_id, version
    return text, None


def _installed_version(judge_id: str) -> str | None:
    return JUDGES.get(judge_id).version if judge_id in JUDGES.ids else None
