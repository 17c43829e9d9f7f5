"""Classification suites: the classes and each template's label."""
from __future__ import annotations

from ...exceptions import SuiteError


def check_suite(suite) -> None:
    """At least two distinct classes; every template has a label among them."""
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
            raise SuiteError(f"label {tpl.label!r} is not among the classes {classes}", file=suite.path,
                             line=suite.line_of("templates", tpl.index, "label"), field=fld)
