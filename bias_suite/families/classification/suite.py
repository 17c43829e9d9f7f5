"""Classification suites: the classes and each template's label.

Without a model, class names are checked against each other and against the
classes of the bundled suites (which the default model has): a label that is
no class is an error, a class that no template uses and that is one typo away
from a label is an error, and a class one typo away from a bundled class is a
:class:`~bias_suite.exceptions.SuiteWarning` (it would fail only at ``run``,
when the model lacks it). Each names the close name it probably meant.
"""
from __future__ import annotations

import warnings

from ...exceptions import SuiteError, SuiteWarning, did_you_mean

#: The classes of the bundled suites and of default-sentiment.
COMMON_CLASSES = ("negative", "neutral", "positive")


def check_suite(suite) -> None:
    """At least two distinct classes; every template has a label among them;
    misspelled class names are reported (module doc)."""
    classes = list(suite.classes or [])
    where = dict(file=suite.path, line=suite.line_of("classes"), field="classes")
    if len(classes) < 2:
        raise SuiteError("classification suites need at least two classes", **where)
    if len(set(classes)) != len(classes):
        raise SuiteError(f"duplicate class names in {classes}", **where)
    for tpl in suite.templates:
        fld = f"templates[{tpl.index}].label"
        if tpl.label is None:
            raise SuiteError("required field is missing", file=suite.path, line=tpl.line, field=fld)
        if tpl.label not in classes:
            close = did_you_mean(tpl.label, classes)
            raise SuiteError(f"label {tpl.label!r} is not among the classes {classes}"
                             + (f"{close} (or that class is misspelled in classes:)" if close else ""),
                             file=suite.path, line=suite.line_of("templates", tpl.index, "label"), field=fld)
    used = list(dict.fromkeys(t.label for t in suite.templates))
    for i, c in enumerate(classes):
        here = dict(file=suite.path, line=suite.line_of("classes", i), field=f"classes[{i}]")
        close = did_you_mean(c, [u for u in used if u != c], cutoff=0.8)
        if c not in used and close:
            raise SuiteError(f"class {c!r} is the label of no template but close to one{close}", **here)
        if c not in COMMON_CLASSES:
            close = did_you_mean(c, COMMON_CLASSES, cutoff=0.8)
            if close:
                at = f"{suite.path or suite.name}:{here['line']}" if here["line"] else str(suite.path or suite.name)
                warnings.warn(f"{at}: field '{here['field']}': class {c!r} is not a class of the bundled suites or "
                              f"of default-sentiment {list(COMMON_CLASSES)}{close} (a model without it fails at run)",
                              SuiteWarning, stacklevel=2)
