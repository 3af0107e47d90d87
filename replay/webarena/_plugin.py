"""WebArena as a plugin of the ``judge`` family: its judge, its settings and their options."""

from replay.derived import Plugin, register_plugin
from replay.webarena._judge import WebArenaJudge
from replay.webarena._settings import OPTIONS, webarena_settings

WEBARENA = register_plugin(
    Plugin(
        name="webarena", kind="judge", producers=(WebArenaJudge,), settings=webarena_settings, options=OPTIONS, rank=10
    )
)
