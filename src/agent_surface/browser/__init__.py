"""Everything that touches the browser (``js``/``pyodide``). Import only under Pyodide."""

from .model_context import detect_model_context
from .proxies import live_proxy_count

__all__ = ["detect_model_context", "live_proxy_count"]
