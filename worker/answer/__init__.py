"""The answer: recovering the final JSON (``extraction``), binding charts to query
results (``charts``), checking every figure in the text against what the queries showed
(``number_check``, reading figures with ``number_parse``) and the calendar years the
data spans (``data_years``)."""
