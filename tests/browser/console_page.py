"""A page object for the web console: the few gestures tests make, with bounded waits.

The console is served with a strict CSP (no eval), so every wait here is a locator wait,
never ``wait_for_function`` with a string.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Vega's SVG renderer draws each mark group as <g class="mark-<type> role-mark">
# holding one <path>/<rect>/<line>... per datum.
CHART_MARKS = ".chart svg g.role-mark > *"


@dataclass
class ConsolePage:
    page: object
    base_url: str

    def open(self, key: str | None = None) -> ConsolePage:
        """Load ``GET /`` and, when given, save ``key`` through the key form."""
        self.page.goto(f"{self.base_url}/")
        # The key state is written by console.js: once it shows, the forms are wired.
        self.page.locator("#key-state", has_text=re.compile(r"\S")).wait_for()
        if key is not None:
            self.save_key(key)
        return self

    def save_key(self, key: str) -> None:
        self.page.fill("#api-key", key)
        self.page.click("#save-key")
        # A bad key may be refused (by the sidebar's loads) before this looks.
        self.page.locator("#key-state", has_text=re.compile(r"^key (saved|rejected)$")).wait_for()

    def ask(self, question: str) -> None:
        """Type a question and press Ask; returns at once (wait for what should follow)."""
        self.page.fill("#question", question)
        self.page.click("#ask")

    def wait_for_answer(self, index: int = 0):
        """Wait until the current answer has a chart with drawn marks; returns the answer."""
        answer = self.page.locator("#answer")
        answer.locator(CHART_MARKS).first.wait_for()
        self.page.locator("#job-status.succeeded").wait_for()
        return answer

    def wait_for_status(self, status: str) -> None:
        self.page.locator(f"#job-status.{status}").wait_for()

    def error_text(self) -> str:
        banner = self.page.locator("#error")
        banner.wait_for(state="visible")
        return banner.inner_text()

    def conversation_items(self):
        return self.page.locator("#conversations [data-testid=conversation-item]")

    # -- datasets -------------------------------------------------------------------

    def upload_dataset(self, name: str, *paths) -> str:
        """Upload files as dataset ``name`` through the Data panel and wait for the end of
        its import; returns the status line (``Ready: ...`` or ``Import failed: ...``)."""
        self.page.fill("#upload-name", name)
        self.page.set_input_files("#upload-files", [str(p) for p in paths])
        self.page.click("#upload-submit")
        state = self.page.locator("[data-testid=upload-state]",
                                  has_text=re.compile(r"^(Ready|Import failed|Upload failed)"))
        state.wait_for()
        return state.inner_text()

    def picker_options(self) -> list[dict]:
        """The dataset picker's options: value, label, whether chosen and marked default."""
        return [{"value": o.get_attribute("value"), "label": o.inner_text(),
                 "selected": o.evaluate("o => o.selected"),
                 "default": o.get_attribute("data-default") == "true"}
                for o in self.page.locator("#dataset-picker option").all()]

    def schema_columns(self, table: str) -> dict[str, dict[str, str]]:
        """The schema browser's columns of ``table``: type and profile text by name."""
        block = self.page.locator(f"[data-testid=schema-table][data-table={table}]")
        block.wait_for(state="attached")
        return {c.get_attribute("data-column"): {
                    "type": c.locator("[data-testid=column-type]").text_content(),
                    "profile": c.locator("[data-testid=column-profile]").text_content()}
                for c in block.locator("[data-testid=schema-column]").all()}

    def suggestions(self) -> list[str]:
        items = self.page.locator("#suggestions [data-testid=suggestion]")
        items.first.wait_for()
        return [s.inner_text() for s in items.all()]
