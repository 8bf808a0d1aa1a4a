"""What a schedule's run sends: the email (multipart: the HTML report inline, the CSV of
the charts' rows attached), the Slack Block Kit message and the webhook's JSON.

Links start with ``SUNRISE_PUBLIC_URL``; the report says when its data is from
(``data_as_of``) and links back to the batch.
"""
from __future__ import annotations

import json
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from shared.models import Schedule, ScheduleRun, iso
from shared.reports import render

# Block Kit limits (https://api.slack.com/reference/block-kit/blocks): a header's text is
# at most 150 characters, a section's text 3000, a button's text 75 and its URL 3000.
HEADER_MAX, SECTION_MAX = 150, 3000


def links(public_url: str, schedule: Schedule, run: ScheduleRun) -> dict[str, str]:
    base = public_url.rstrip("/")
    return {"report": f"{base}/v1/batches/{run.batch_id}/report?format=html",
            "batch": f"{base}/v1/batches/{run.batch_id}",
            "schedule": f"{base}/v1/schedules/{schedule.id}",
            "runs": f"{base}/v1/schedules/{schedule.id}/runs"}


def data_as_of(document: dict[str, Any]) -> str | None:
    """The oldest moment any answer's data is from, or None when none says."""
    stamps = [q.get("data_as_of") for q in document.get("questions", []) if q.get("data_as_of")]
    return min(stamps) if stamps else None


def subject(schedule: Schedule, run: ScheduleRun) -> str:
    return f"{schedule.name} — {run.slot:%Y-%m-%d}"


def first_answer(document: dict[str, Any]) -> str:
    for question in document.get("questions", []):
        if question.get("answer_text"):
            return question["answer_text"]
    return "No question was answered; see the report."


def email_message(sender: str, schedule: Schedule, run: ScheduleRun, document: dict[str, Any],
                  to: list[str], public_url: str) -> EmailMessage:
    """The mail: a plain-text part with the links, the HTML report as the alternative
    shown inline, and the CSV of the charts' rows attached."""
    link = links(public_url, schedule, run)
    msg = EmailMessage()
    msg["Subject"] = subject(schedule, run)
    msg["From"] = sender
    msg["To"] = ", ".join(to)
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain="sunrise")
    msg["X-Sunrise-Schedule"] = schedule.id
    msg["X-Sunrise-Run"] = run.id
    as_of = data_as_of(document)
    msg.set_content(f"{schedule.name}\n\n{first_answer(document)}\n\n"
                    + (f"Data as of {as_of}.\n" if as_of else "")
                    + f"The full report: {link['report']}\n")
    msg.add_alternative(render(document, "html").decode(), subtype="html")
    msg.add_attachment(render(document, "csv"), maintype="text", subtype="csv",
                       filename=f"sunrise-{run.slot:%Y%m%d-%H%M}.csv")
    return msg


def slack_message(schedule: Schedule, run: ScheduleRun, document: dict[str, Any],
                  public_url: str) -> dict[str, Any]:
    """A Block Kit message: a header with the title, a section with the first answer's
    text, the data's date as context, and a button linking to the report."""
    link = links(public_url, schedule, run)
    as_of = data_as_of(document)
    title = subject(schedule, run)
    context = f"Run {run.id[:8]} · slot {iso(run.slot)}" + (f" · data as of {as_of}" if as_of else "")
    return {
        "text": f"{title}: {link['report']}",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": _cut(title, HEADER_MAX)}},
            {"type": "section", "text": {"type": "mrkdwn",
                                         "text": _cut(first_answer(document), SECTION_MAX)}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(context, SECTION_MAX)}]},
            {"type": "actions", "elements": [{
                "type": "button", "text": {"type": "plain_text", "text": "Open the report"},
                "url": link["report"], "action_id": "open_report"}]},
        ]}


def webhook_payload(schedule: Schedule, run: ScheduleRun, document: dict[str, Any],
                    public_url: str) -> bytes:
    return json.dumps({
        "event": "schedule.run", "schedule_id": schedule.id, "name": schedule.name,
        "run_id": run.id, "slot": iso(run.slot), "batch_id": run.batch_id,
        "condition_value": run.condition_value, "data_as_of": data_as_of(document),
        "first_answer": first_answer(document), "links": links(public_url, schedule, run),
    }, separators=(",", ":")).encode()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
