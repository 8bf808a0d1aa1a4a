// Sidebar panels: usage aggregates and batch reports.

import { api, reportUrl } from "./api.js";
import { el, fmtInt, fmtUsd } from "./render.js";

const BATCH_POLL_MS = 2000;
const USAGE_DAYS_SHOWN = 14;

/** cache_read / (input + cache_read + cache_creation), or null when nothing was read. */
export function cacheHitRatio(t) {
  const read = t.cache_read_tokens || 0;
  const all = (t.input_tokens || 0) + read + (t.cache_creation_tokens || 0);
  return all > 0 ? read / all : null;
}

const pct = (r) => (r === null ? "–" : `${(r * 100).toFixed(1)}%`);

function stat(label, value, testid) {
  return el("div", { class: "stat", "data-testid": testid },
    el("div", { class: "stat-value" }, value), el("div", { class: "stat-label" }, label));
}

/**
 * Fetch `GET /v1/usage?group_by=day` and render totals and a per-day table into `root`.
 * A server without the usage endpoint (404) gets a note, not an error; other errors throw.
 */
export async function loadUsage(root) {
  let data;
  try {
    data = await api("/v1/usage?group_by=day");
  } catch (err) {
    if (err.status !== 404 && err.status !== 403) throw err;
    // 403: a signed-in viewer or analyst; the tenant's usage is for its admins.
    root.replaceChildren(el("p", { class: "muted", "data-testid": "usage-unavailable" },
      err.status === 403 ? "Usage is shown to the tenant's admins."
        : "Usage reporting is not available on this server."));
    return;
  }
  const totals = data.totals || {};
  const items = [...(data.items || [])].sort((a, b) => String(b.key).localeCompare(String(a.key)));
  const grid = el("div", { class: "stats" },
    stat("jobs", fmtInt(totals.jobs), "usage-jobs"),
    stat("LLM calls", fmtInt(totals.llm_calls), "usage-llm-calls"),
    stat("input tok", fmtInt(totals.input_tokens), "usage-input"),
    stat("output tok", fmtInt(totals.output_tokens), "usage-output"),
    stat("cache read", fmtInt(totals.cache_read_tokens), "usage-cache-read"),
    stat("cache write", fmtInt(totals.cache_creation_tokens), "usage-cache-write"),
    stat("cost", fmtUsd(totals.cost_usd), "usage-cost"),
    stat("cache hit", pct(cacheHitRatio(totals)), "usage-cache-hit"));
  const rows = items.slice(0, USAGE_DAYS_SHOWN).map((it) => el("tr", {},
    el("td", {}, it.key),
    el("td", { class: "num" }, fmtInt(it.jobs)),
    el("td", { class: "num" }, fmtInt((it.input_tokens || 0) + (it.output_tokens || 0))),
    el("td", { class: "num" }, pct(cacheHitRatio(it))),
    el("td", { class: "num" }, fmtUsd(it.cost_usd))));
  const table = items.length
    ? el("table", { class: "data-table compact" },
      el("thead", {}, el("tr", {}, ["day", "jobs", "in+out tok", "cache hit", "cost"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows))
    : el("p", { class: "muted" }, "No jobs yet.");
  root.replaceChildren(grid, table);
}

/**
 * Wire the batch form: questions typed, pasted or loaded from a text file
 * (blank and `#` lines skipped); submit them, then poll the batch until it
 * completes and link its HTML report. `report(err)` shows errors; `completed(batch)`
 * is called once the report is ready (its jobs added conversations and usage).
 */
export function initBatches({ form, questions, file, title, status, report, completed = () => {} }) {
  let timer = null;

  // A loaded file fills the text box, so the questions can be checked before running.
  file.addEventListener("change", async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    const lines = (await chosen.text()).split(/\r?\n/).map((q) => q.trim());
    questions.value = lines.filter((q) => q && !q.startsWith("#")).join("\n");
    if (!title.value.trim()) title.value = chosen.name.replace(/\.[^.]+$/, "");
    file.value = "";
  });

  function render(batch) {
    const counts = batch.counts || {};
    const done = (counts.succeeded || 0) + (counts.failed || 0) + (counts.cancelled || 0);
    const children = [
      el("div", { class: "batch-head" },
        el("strong", {}, batch.title || `Batch ${batch.batch_id}`),
        el("span", { class: `status-pill ${batch.status}`, "data-testid": "batch-state" }, batch.status)),
      el("progress", { max: 1, value: batch.progress ?? (batch.total ? done / batch.total : 0) }),
      el("div", { class: "muted" }, `${done} of ${batch.total ?? "?"} done`,
        batch.status !== "completed" && batch.eta_s ? ` · about ${Math.ceil(batch.eta_s)} s left` : ""),
      el("div", { class: "chips" }, ["queued", "running", "succeeded", "failed", "cancelled"]
        .filter((k) => counts[k]).map((k) => el("span", { class: `chip ${k}` }, `${k} ${counts[k]}`))),
    ];
    if (batch.status === "completed") {
      children.push(el("a", {
        id: "batch-report", "data-testid": "batch-report", class: "button-link",
        href: reportUrl(batch.batch_id), target: "_blank", rel: "noopener noreferrer",
      }, "Open report"));
    }
    status.replaceChildren(...children);
  }

  async function poll(batchId, failures = 0) {
    try {
      const batch = await api(`/v1/batches/${encodeURIComponent(batchId)}`);
      render(batch);
      if (batch.status !== "completed") timer = setTimeout(() => poll(batchId), BATCH_POLL_MS);
      else completed(batch);
    } catch (err) {
      const transient = err.status === 0 || err.status === 429 || err.status >= 500;
      if (transient && failures < 5) {
        const waitMs = (Number(err.retryAfter) || 2 ** (failures + 1)) * 1000;
        timer = setTimeout(() => poll(batchId, failures + 1), waitMs);
      } else {
        report(err);
      }
    }
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const list = questions.value.split("\n").map((q) => q.trim()).filter(Boolean);
    if (list.length === 0) {
      status.replaceChildren(el("p", { class: "muted" }, "Enter at least one question, one per line."));
      return;
    }
    clearTimeout(timer);
    const body = { questions: list };
    if (title.value.trim()) body.title = title.value.trim();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const created = await api("/v1/batches", { method: "POST", body });
      status.replaceChildren(el("p", { class: "muted" },
        `Batch ${created.batch_id} accepted: ${(created.job_ids || list).length} questions.`));
      questions.value = "";
      poll(created.batch_id);
    } catch (err) {
      report(err);
    } finally {
      button.disabled = false;
    }
  });
}
