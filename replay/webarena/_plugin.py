"""WebArena as a plugin of the ``judge`` family: its judge (imported when it judges), its settings and their
options."""

from p2w_rt.replay.derived import Deferred, Plugin, register_plugin
from p2w_rt.replay.webarena._settings import OPTIONS, webarena_settings

WEBARENA = register_plugin(
    Plugin(
        name="webarena",
        kind="judge",
        producers=(Deferred(("webarena",), "p2w_rt.replay.webarena._judge:WebArenaJudge"),),
        settings=webarena_settings,
        options=OPTIONS,
        rank=10,
    )
)
