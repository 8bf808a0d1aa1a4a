"""One job from claim to finish: the runner (``runner``), its database writes
(``store``), what happens around it (``hooks``, ``events``, ``heartbeat``), where its
data comes from (``data_source``), the conversation's earlier turns (``history``) and
the reaper that hands back jobs whose worker died (``reaper``)."""
