"""``sunrise eval``: execution accuracy, answer accuracy, faithfulness and cost of Sunrise
on a gold set of questions (``gold``), scored by BIRD's execution-accuracy rules
(``result_match``) and rendered as JSON and self-contained HTML (``report_html``)."""
