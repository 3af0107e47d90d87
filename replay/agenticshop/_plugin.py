"""AgenticShop as a plugin of the ``judge`` family: its four judges, its settings and their option."""

from p2w_rt.replay.agenticshop._judges import SHOP_JUDGES
from p2w_rt.replay.agenticshop._settings import OPTIONS, shop_settings
from p2w_rt.replay.derived import Plugin, register_plugin

AGENTICSHOP = register_plugin(
    Plugin(name="agenticshop", kind="judge", producers=SHOP_JUDGES, settings=shop_settings, options=OPTIONS, rank=20)
)
