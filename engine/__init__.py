"""Libraries both rooms use, knowing nothing of HTTP or Celery: the SQL sandbox
(``engine.sql``), the import engine (``engine.datasets``), the live engines
(``engine.live``), row policies (``engine.policies``), one statement on a stored dataset
whatever its mode (``engine.dataset_query``) and the limited helper process they both
run their work in (``engine.child_process``). ``api`` and ``worker`` import from here;
nothing here imports them."""
