// The live trace of one job: queue and start, each LLM round with its
// tokens, the model's thinking summaries, each SQL query as it runs, and a
// usage summary at the end.

import { el, fmtInt, fmtMs, fmtUsd } from "./render.js";

const chip = (label, value, cls = "") => el("span", { class: `chip ${cls}`.trim() }, label ? `${label} ${value}` : value);

function item(kind, title, ...rest) {
  return el("li", { class: `progress-item ${kind}`, "data-testid": "progress-item", "data-kind": kind },
    el("div", { class: "progress-line" }, el("span", { class: "progress-title" }, title), ...rest));
}

function llmItem(d) {
  // The worker counts rounds of tool use from 0 (the first call precedes any tool).
  return item("llm_call", `LLM call ${d.round === undefined ? "?" : d.round + 1}`,
    chip("in", fmtInt(d.input_tokens)),
    chip("out", fmtInt(d.output_tokens)),
    chip("cache read", fmtInt(d.cache_read_tokens)),
    chip("cache write", fmtInt(d.cache_creation_tokens)),
    d.stop_reason ? chip("", d.stop_reason, "stop") : null,
    chip("", fmtMs(d.ms), "time"));
}

function thinkingItem(d) {
  // The summary of the model's thinking in this round, as the API returned it.
  const node = item("thinking", "Thinking");
  node.append(el("div", { class: "thinking-text", "data-testid": "thinking-text" }, String(d.text || "")));
  return node;
}

function toolItem(d) {
  // A call of any tool; execute_sql is shown as "SQL", its input as the statement.
  const failed = Boolean(d.error);
  const label = !d.tool || d.tool === "execute_sql" ? "SQL" : d.tool;
  const node = item("tool_call",
    `${label}${d.query_id !== null && d.query_id !== undefined ? ` #${d.query_id}` : ""}`,
    failed ? chip("", "error", "bad") : chip("", `${fmtInt(d.rows)} rows`),
    d.cached ? chip("", "cached", "good") : chip("", "executed"),
    chip("", fmtMs(d.ms), "time"));
  node.setAttribute("data-query-id", d.query_id ?? "");
  if (failed) node.classList.add("failed");
  if (d.sql) node.append(el("pre", { class: "sql" }, d.sql));
  if (failed) node.append(el("div", { class: "progress-error" }, String(d.error)));
  return node;
}

/** Usage line shown once the job is over. */
export function usageSummary(usage) {
  if (!usage) return null;
  return el("div", { class: "usage-summary", "data-testid": "job-usage" },
    chip("rounds", fmtInt(usage.tool_rounds)),
    chip("SQL", `${fmtInt(usage.sql_executed)} run, ${fmtInt(usage.sql_cache_hits)} cached`),
    chip("context", `${fmtInt(usage.context_tokens)} tok`),
    chip("out", `${fmtInt(usage.output_tokens)} tok`),
    chip("cache read", fmtInt(usage.cache_read_tokens)),
    chip("cost", fmtUsd(usage.cost_usd)),
    chip("LLM", fmtMs(usage.llm_ms)),
    chip("SQL", fmtMs(usage.sql_ms)),
    chip("wall", fmtMs(usage.wall_ms)));
}

export class Progress {
  constructor(root) {
    this.root = root;
  }

  reset() {
    this.list = el("ol", { class: "progress-list" });
    this.details = el("details", { class: "progress-details", open: true },
      el("summary", {}, "Progress"), this.list);
    this.root.replaceChildren(this.details);
  }

  note(text, kind = "note") {
    this.list.append(item(kind, text));
  }

  /** Show one SSE event; `answer_delta` is the answer's business, not ours. */
  event(type, data) {
    if (type === "queued") this.note("Queued", "queued");
    else if (type === "started") this.note("Started on a worker", "started");
    else if (type === "llm_call") this.list.append(llmItem(data));
    else if (type === "thinking") this.list.append(thinkingItem(data));
    else if (type === "tool_call") this.list.append(toolItem(data));
  }

  finish(job) {
    const label = { succeeded: "Done", failed: "Failed", cancelled: "Cancelled" }[job.status] || job.status;
    this.note(label, job.status);
    const summary = usageSummary(job.usage);
    if (summary) this.root.append(summary);
    // Keep the trace, folded, so the answer is what meets the eye.
    if (job.status === "succeeded") this.details.open = false;
  }
}
