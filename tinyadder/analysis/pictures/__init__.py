"""Pictures: the explorer's views as data (``views``), drawn as SVG (``figures``), and the
self-contained explorer page (``explore``, with its script and style)."""
