// The thread's current turn as the user sees it: the status pill, the Ask and
// Cancel buttons while a job runs, the final answer (or failure, or
// cancellation), and moving a finished turn into the history.

import { dataAsOfNote, el, renderAnswer } from "./render.js";
import { showError } from "./error_banner.js";
import { feedbackBar, resultMarks } from "./trust.js";

export class ThreadView {
  /** `ui`: the console's elements; `progress`: its Progress; `progressBox`: the element it fills. */
  constructor(ui, progress, progressBox, { onChoose = () => {} } = {}) {
    this.onChoose = onChoose;
    this.ui = ui;
    this.progress = progress;
    this.progressBox = progressBox;
  }

  setRunning(running) {
    const { ui } = this;
    ui.ask.disabled = running;
    ui.cancel.hidden = !running;
    ui.cancel.disabled = false;
    ui.cancel.textContent = "Cancel";
  }

  setStatus(status) {
    const pill = this.ui.jobStatus;
    pill.hidden = false;
    pill.textContent = status;
    pill.className = `status-pill ${status}`;
  }

  scrollToEnd() {
    this.ui.thread.scrollTop = this.ui.thread.scrollHeight;
  }

  /** Move the finished current turn into the history so #answer is free again. */
  archiveCurrentTurn() {
    const { ui } = this;
    if (ui.current.hidden) return;
    const answer = el("div", { class: "bubble assistant answer", "data-testid": "message-assistant" });
    answer.append(...ui.answer.childNodes);
    const trace = el("div", { class: "progress" });
    trace.append(...this.progressBox.childNodes);
    const details = trace.querySelector("details");
    if (details) details.open = false;
    ui.history.append(
      el("div", { class: "bubble user", "data-testid": "message-user" }, ui.currentQuestion.textContent),
      trace, answer);
  }

  showFinal(job, final) {
    const { ui } = this;
    this.setStatus(final.status);
    this.progress.finish(final);
    const result = final.result || {};
    const sqlFor = (queryId) => job.sql.get(queryId);
    if (final.status === "succeeded") {
      renderAnswer(ui.answer, result.answer_text || "", result.charts || [], { sqlFor, numbers: result.numbers })
        .then(() => {
          // After the answer's own nodes, which renderAnswer replaces.
          ui.answer.append(...resultMarks(result, { onChoose: this.onChoose }), feedbackBar(final.job_id));
          this.scrollToEnd();
        });
      if (result.truncated) {
        ui.answer.append(el("p", { class: "muted" }, "The answer was cut short; try a narrower question."));
      }
      const asOf = dataAsOfNote(final.data_as_of);
      if (asOf) ui.answer.append(asOf);
    } else if (final.status === "failed") {
      const error = final.error || {};
      ui.answer.replaceChildren(el("div", { class: "job-error", "data-testid": "job-error" },
        el("strong", {}, `Job failed: ${error.code || "unknown_error"}`),
        el("p", {}, error.message || "No message was given.")));
      showError(new Error(`Job failed (${error.code || "unknown_error"}): ${error.message || "no message"}`));
    } else {
      ui.answer.querySelector(".thinking")?.remove();
      ui.answer.append(el("p", { class: "muted", "data-testid": "job-cancelled" }, "The job was cancelled."));
    }
    this.scrollToEnd();
  }
}
