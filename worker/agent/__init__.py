"""The tool-use loop: the streaming loop (``loop``), one round's step for every stop
reason (``turn``, ``stop_reasons``), the cached system prompt (``system_prompt``) and
the answer as it is written (``answer_stream``)."""
