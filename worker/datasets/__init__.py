"""Dataset work on a worker: one import run from claim to announce (``import_run``), in
a process of its own (``import_process`` → ``import_child``, which calls the import
engine, ``engine.datasets``), versions no job uses any more removed (``versions``) and a
version's system prompt (``prompt``)."""
