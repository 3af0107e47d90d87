"""The ids of AgenticShop's judges, apart from the judges: ``metrics`` tells its tables' judgments by them without
loading a judge."""

ATTRIBUTION = "attribution"
HIT = "hit-ratio"
EXTRACT = "agenticshop-extract"
CHECKLIST = "agenticshop-checklist"
SHOP_JUDGE_IDS = frozenset({ATTRIBUTION, HIT, EXTRACT, CHECKLIST})
