"""Meta-evaluation: how far judges agree with each other, with humans, and with themselves (``p2w-rt agree``).

The names load on first use: recording or reading labels (``import-labels``, the viewer) imports neither numpy nor
krippendorff, which only the agreement statistics need (docs/design/startup.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.agreement._agree import agree
    from p2w_rt.replay.agreement._labels import (
        ImportSummary,
        Label,
        check_annotator,
        import_labels,
        label_of,
        record_labels,
    )
    from p2w_rt.replay.agreement._raters import (
        CLASSIFIER_PREFIX,
        ERROR_POINT,
        HUMAN_PREFIX,
        items,
    )
    from p2w_rt.replay.agreement._report import (
        AgreementReport,
        PairReport,
        agreement,
    )
    from p2w_rt.replay.agreement._stats import (
        BOOTSTRAP_SAMPLES,
        Estimate,
        accuracy,
        alpha,
        bootstrap,
        cohen_kappa,
        pair_agreement,
        pearson,
        spearman,
    )

__all__ = [
    "BOOTSTRAP_SAMPLES",
    "CLASSIFIER_PREFIX",
    "ERROR_POINT",
    "AgreementReport",
    "Estimate",
    "HUMAN_PREFIX",
    "ImportSummary",
    "Label",
    "PairReport",
    "accuracy",
    "agree",
    "agreement",
    "alpha",
    "bootstrap",
    "check_annotator",
    "cohen_kappa",
    "import_labels",
    "items",
    "label_of",
    "pair_agreement",
    "pearson",
    "record_labels",
    "spearman",
]

_MODULES = {
    "agree": "_agree",
    "ImportSummary": "_labels",
    "Label": "_labels",
    "check_annotator": "_labels",
    "import_labels": "_labels",
    "label_of": "_labels",
    "record_labels": "_labels",
    "CLASSIFIER_PREFIX": "_raters",
    "ERROR_POINT": "_raters",
    "HUMAN_PREFIX": "_raters",
    "items": "_raters",
    "AgreementReport": "_report",
    "PairReport": "_report",
    "agreement": "_report",
    "BOOTSTRAP_SAMPLES": "_stats",
    "Estimate": "_stats",
    "accuracy": "_stats",
    "alpha": "_stats",
    "bootstrap": "_stats",
    "cohen_kappa": "_stats",
    "pair_agreement": "_stats",
    "pearson": "_stats",
    "spearman": "_stats",
}
"""Where each exported name lives."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
