"""What Redis says about its clients: how many are blocked in a stream read right now."""
from __future__ import annotations

import redis

from shared.redis_client import redis_for


def blocked_reads(redis_url: str, *, client_name: str | None = None) -> int:
    """Connections now blocked in XREAD on the database of ``redis_url`` (any process),
    or only those named ``client_name``."""
    db = redis.connection.parse_url(redis_url).get("db", 0)
    return sum(1 for c in redis_for(redis_url).client_list()
               if c.get("cmd") == "xread" and "b" in c.get("flags", "")
               and int(c.get("db", -1)) == int(db)
               and (client_name is None or c.get("name") == client_name))
