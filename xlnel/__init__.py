"""xlnel: cross-lingual biomedical named-entity linking."""

from __future__ import annotations

__version__ = "0.1.0"
