"""Every output format of gpuplan: tables and their layout, JSON contracts, CSV, Markdown, HTML, charts, exports.

One module per subject (plan, offers, workload, tco, launch, export); :mod:`gpuplan.render.table`
turns rows into a table, JSON, CSV or Markdown for all of them.
"""

__all__ = ["export", "launch", "layout", "offers", "plan", "table", "tco", "tco_chart"]
