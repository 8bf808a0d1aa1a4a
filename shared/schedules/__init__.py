"""Report schedules: what a schedule may hold (``targets``, ``condition``), how it is
shown (``view``), and the run states. The API saves schedules; the worker's tick and
runner (``worker/schedules/``) run and deliver them."""
from __future__ import annotations

RUN_STATUSES = ("skipped", "running", "delivered", "partially_delivered", "failed")
DELIVERY_TYPES = ("email", "slack", "webhook")
