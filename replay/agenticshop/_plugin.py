"""AgenticShop as a plugin of the ``judge`` family: its four judges (imported when one of them judges), its
settings and their option."""

from p2w_rt.replay.agenticshop._ids import ATTRIBUTION, CHECKLIST, EXTRACT, HIT
from p2w_rt.replay.agenticshop._settings import OPTIONS, shop_settings
from p2w_rt.replay.derived import Deferred, Plugin, register_plugin

AGENTICSHOP = register_plugin(
    Plugin(
        name="agenticshop",
        kind="judge",
        producers=(Deferred((ATTRIBUTION, HIT, EXTRACT, CHECKLIST), "p2w_rt.replay.agenticshop:SHOP_JUDGES"),),
        settings=shop_settings,
        options=OPTIONS,
        rank=20,
    )
)
