"""Vega-Lite specs to standalone SVG, rendered server-side with vl-convert.

vl-convert runs Vega in an embedded engine with no network access, so the SVG
needs nothing but itself to display. Each SVG's ids are prefixed with the chart's
place in the report, so many charts can be inlined in one HTML page without their
clip paths or gradients colliding.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Any

logger = logging.getLogger(__name__)

_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')
# vl-convert keeps one JavaScript engine per process; calls are serialised here so
# concurrent report assemblies in one threaded worker never interleave inside it.
_lock = threading.Lock()


def spec_to_svg(spec: dict[str, Any], *, id_prefix: str = "") -> str:
    """The SVG markup for ``spec``. Raises whatever vl-convert raises for a bad spec."""
    import vl_convert

    with _lock:
        svg = vl_convert.vegalite_to_svg(spec)
    if id_prefix:
        svg = _ID.sub(lambda m: f'id="{id_prefix}{m.group(1)}"', svg)
        svg = _REF.sub(lambda m: f"{m.group(1)}{id_prefix}{m.group(2)}", svg)
    return svg


def render_charts(document: dict[str, Any]) -> int:
    """Add ``"svg"`` to every chart of ``document`` that has a Vega-Lite spec and no SVG.

    Modifies the document in place and returns how many charts it rendered. A
    chart that cannot be rendered gets ``"svg": None`` and ``"svg_error"``: one bad
    chart costs its picture, never the report.
    """
    rendered = 0
    for question in document["questions"]:
        for n, chart in enumerate(question.get("charts") or []):
            if chart.get("svg"):  # rendered ahead of time
                continue
            spec = chart.get("vega_lite")
            if not spec:
                chart["svg"] = None
                continue
            try:
                chart["svg"] = spec_to_svg(spec, id_prefix=f"q{question['index']}c{n}-")
                rendered += 1
            except Exception as exc:
                logger.warning("batch %s question %s chart %s: SVG rendering failed: %s",
                               document["batch_id"], question["index"], n, exc)
                chart["svg"] = None
                chart["svg_error"] = str(exc)[:500]
    return rendered
