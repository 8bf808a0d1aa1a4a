"""Batches: progress and report assembly (``coordinator``), the completion webhook
(``webhook``) and economy mode, which runs a batch through the Message Batches API
(``message_batches``)."""
