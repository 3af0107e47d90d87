"""The ids of AgenticShop's judges, apart from the judges: ``metrics`` tells its tables' judgments by them without
loading a judge, and the users who curated nothing by the failure every judge gives them."""

ATTRIBUTION = "attribution"
HIT = "hit-ratio"
EXTRACT = "agenticshop-extract"
CHECKLIST = "agenticshop-checklist"
SHOP_JUDGE_IDS = frozenset({ATTRIBUTION, HIT, EXTRACT, CHECKLIST})
NO_PRODUCTS = "curated no products: the answer links none"
"""Why an empty curation has no figure: the reference judges none of it (``run_pipeline.py`` makes no result folder
for an empty ``search_results``) and so leaves the user out of its means (``collect_results.py`` averages over the
folders)."""
