// Answers people can trust and teach: under every answer, the "verified" mark (the
// verified question on hover), a clarifying question's options as buttons, and thumbs
// up/down with an optional comment; the Review panel lists down-voted answers with
// their SQL and a form to keep a corrected query (docs/verified-queries.md).

import { api } from "./api.js";
import { el } from "./render.js";
import { showError } from "./error_banner.js";

/** The verified mark and the clarification's options of `result`, as nodes. */
export function resultMarks(result, { onChoose }) {
  const nodes = [];
  if (result.verified) {
    nodes.push(el("span", {
      class: "verified-mark", "data-testid": "verified-mark",
      title: `Verified query: ${result.verified.question}`,
    }, "✓ verified"));
  }
  const ask = result.clarification;
  if (ask && Array.isArray(ask.options)) {
    const buttons = ask.options.map((option) => {
      const button = el("button", { type: "button", class: "clarify-option", "data-testid": "clarify-option" }, option);
      button.addEventListener("click", () => onChoose(option));
      return button;
    });
    nodes.push(el("div", { class: "clarify", "data-testid": "clarify" }, ...buttons));
  }
  return nodes;
}

/** Thumbs up/down with an optional comment for the job `jobId`. */
export function feedbackBar(jobId) {
  const comment = el("input", { type: "text", class: "feedback-comment", "data-testid": "feedback-comment",
    placeholder: "What was wrong? (optional)", maxlength: "2000" });
  const state = el("span", { class: "muted", "data-testid": "feedback-state" });
  const send = async (rating) => {
    try {
      const body = { rating };
      if (comment.value.trim()) body.comment = comment.value.trim();
      await api(`/v1/jobs/${encodeURIComponent(jobId)}/feedback`, { method: "POST", body });
      state.textContent = rating === "up" ? "Thanks: rated helpful." : "Thanks: rated wrong.";
    } catch (err) {
      showError(err);
    }
  };
  const up = el("button", { type: "button", class: "thumb", "data-testid": "thumb-up", title: "Right answer" }, "👍");
  const down = el("button", { type: "button", class: "thumb", "data-testid": "thumb-down", title: "Wrong answer" }, "👎");
  up.addEventListener("click", () => send("up"));
  down.addEventListener("click", () => send("down"));
  return el("div", { class: "feedback", "data-testid": "feedback" }, up, down, comment, state);
}

/** The admins' Review panel: down-voted answers of the chosen dataset, each with a
 * "verify a corrected query" form. */
export class ReviewPanel {
  constructor(root, refreshButton, selectedDataset) {
    this.root = root;
    this.selectedDataset = selectedDataset;
    refreshButton.addEventListener("click", () => this.load().catch(showError));
  }

  async load() {
    const datasetId = this.selectedDataset();
    if (!datasetId) {
      this.root.replaceChildren(el("p", { class: "muted" }, "Choose a dataset to review its answers."));
      return;
    }
    const { items } = await api(`/v1/datasets/${encodeURIComponent(datasetId)}/feedback?rating=down`);
    if (!items.length) {
      this.root.replaceChildren(el("p", { class: "muted" }, "No down-voted answers."));
      return;
    }
    this.root.replaceChildren(...items.map((item) => this.entry(datasetId, item)));
  }

  entry(datasetId, item) {
    const question = el("input", { type: "text", "data-testid": "verify-question", value: item.question || "" });
    const sql = el("textarea", { rows: "4", "data-testid": "verify-sql", spellcheck: "false" });
    sql.value = item.sql || "";
    const state = el("div", { class: "muted", "data-testid": "verify-state", "aria-live": "polite" });
    const form = el("form", { class: "verify-form", "data-testid": "verify-form" },
      el("label", { class: "field-label muted" }, "Question"), question,
      el("label", { class: "field-label muted" }, "Corrected SQL"), sql,
      el("button", { type: "submit", "data-testid": "verify-submit" }, "Verify this query"), state);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      state.textContent = "Checking the query…";
      try {
        const kept = await api(`/v1/datasets/${encodeURIComponent(datasetId)}/verified-queries`, {
          method: "POST", body: { question: question.value, sql: sql.value, from_job_id: item.job_id } });
        state.textContent = `Verified: answers to questions like this one will use it (${kept.verified_query_id}).`;
      } catch (err) {
        state.textContent = `Not kept: ${err.message}`;
      }
    });
    return el("div", { class: "review-item", "data-testid": "review-item" },
      el("p", {}, el("strong", {}, item.question || "")),
      el("p", { class: "muted" }, item.comment ? `“${item.comment}”` : "No comment."),
      el("pre", { class: "review-sql" }, item.sql || "(no query)"),
      form);
  }
}
