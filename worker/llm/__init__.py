"""The model client: the SDK client per process (``client``), each request's parameters
from the model rules (``request``), the streamed reply (``stream``, read raw by
``message_events``) and what a failed call means for the job (``errors``)."""
