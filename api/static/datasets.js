// The Data panel: which dataset questions go to (the tenant's default marked and
// chosen first; datasets of one name told apart by version, creation and source), its
// schema with profile and import warnings, a one-click re-type of a text column the
// import says reads as numbers or dates, suggested questions, failed imports to
// delete, and uploads from the browser (upload progress from XHR, then import progress
// from the dataset's event stream, long-polling the dataset when streaming is
// unavailable).

import { ApiError, api, csrfToken, getKey } from "./api.js";
import { el, fmtInt } from "./render.js";
import { columnSummary, suggestQuestions } from "./suggestions.js";

const CHOICE_STORAGE = "sunrise.datasetId";
const BUILT_IN = "";
const POLL_MS = 1000;
const IMPORT_TERMINAL = ["ready", "failed"];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const datasetPath = (id) => `/v1/datasets/${encodeURIComponent(id)}`;
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const count = (n, noun) => `${fmtInt(n)} ${noun}${n === 1 ? "" : "s"}`;
const TEXT_TYPE = /^(VARCHAR|TEXT|STRING)/i;
// What a re-type's target is called in the schema browser's offer.
const TYPE_WORDS = { DOUBLE: "number", BIGINT: "whole number", DATE: "date", TIMESTAMP: "date and time", BOOLEAN: "yes/no" };

/** What tells a dataset from others of its name: version, when made, where from. */
function distinction(d) {
  const parts = [d.version ? `v${d.version}` : d.status];
  if (d.created_at) parts.push(d.created_at.slice(0, 19).replace("T", " "));
  const sources = (d.sources || []).map((s) => s.file || s.url).filter(Boolean);
  if (sources.length) parts.push(sources.length > 2 ? `${sources.slice(0, 2).join(", ")}, …` : sources.join(", "));
  return parts.join(", ");
}

/** The offer on a text column the import found readable as another type. */
function offerText(suggestion) {
  if (suggestion.label) return suggestion.label;
  const type = String(suggestion.type || "").toUpperCase();
  const word = type.startsWith("DECIMAL") ? "number" : TYPE_WORDS[type] || type.toLowerCase();
  return `looks like a ${word} — treat as ${word}?`;
}

function withToken(path) {
  const key = getKey();
  return key ? `${path}?access_token=${encodeURIComponent(key)}` : path;
}

/** POST the form as multipart with upload progress; resolves to the 202 body. */
function uploadForm(form, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/datasets");
    xhr.setRequestHeader("Accept", "application/json");
    const key = getKey();
    if (key) xhr.setRequestHeader("Authorization", `Bearer ${key}`);
    else if (csrfToken()) xhr.setRequestHeader("X-CSRF-Token", csrfToken());
    xhr.upload.addEventListener("progress", (ev) => {
      if (ev.lengthComputable) onProgress(ev.loaded, ev.total);
    });
    xhr.addEventListener("load", () => {
      let data = null;
      try {
        data = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        data = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data);
      else reject(new ApiError(xhr.status, (data && data.title) || xhr.statusText || "Upload failed",
        (data && data.detail) || "", xhr.getResponseHeader("Retry-After")));
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "Network error", "the upload did not reach the API")));
    xhr.send(form);
  });
}

/**
 * Follow one import: `onEvent(type, data)` for its progress; resolves to the
 * dataset once the import is over (from the terminal event, else by polling).
 */
function followImport(datasetId, onEvent) {
  const sse = new Promise((resolve) => {
    if (typeof EventSource === "undefined") {
      resolve(null);
      return;
    }
    const source = new EventSource(withToken(`${datasetPath(datasetId)}/events`));
    source.onmessage = (ev) => onEvent("message", JSON.parse(ev.data || "{}"));
    source.addEventListener("progress", (ev) => onEvent("progress", JSON.parse(ev.data || "{}")));
    for (const type of IMPORT_TERMINAL) {
      source.addEventListener(type, () => {
        source.close();
        resolve(type);
      });
    }
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) resolve(null);
    };
  });
  return sse.then(async (ending) => {
    for (;;) {
      const dataset = await api(datasetPath(datasetId));
      if (ending || dataset.status !== "importing") return { ending, dataset };
      await sleep(POLL_MS);
    }
  });
}

export class DataPanel {
  /** `ui`: the panel's elements; `ask(question)` asks a suggested question; `report(err)` shows errors. */
  constructor(ui, { ask, report }) {
    this.ui = ui;
    this.askQuestion = ask;
    this.report = report;
    this.datasets = [];
    ui.picker.addEventListener("change", () => this.choose(ui.picker.value));
    ui.uploadForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.upload();
    });
    ui.files.addEventListener("change", () => {
      const first = ui.files.files && ui.files.files[0];
      if (first && !ui.name.value.trim()) ui.name.value = first.name.replace(/\.[^.]+$/, "");
    });
  }

  /** The dataset questions go to, or null for the server's choice (the built-in data). */
  selectedId() {
    return this.ui.picker.value || null;
  }

  async load() {
    // A later load (a new key, an upload) wins over one still in flight.
    const generation = (this.generation = (this.generation || 0) + 1);
    const datasets = [];
    let page = await api("/v1/datasets");
    while (page) {
      datasets.push(...(page.items || []));
      page = page.next_cursor ? await api(`/v1/datasets?cursor=${encodeURIComponent(page.next_cursor)}`) : null;
    }
    if (generation !== this.generation) return;
    this.datasets = datasets;
    const stored = localStorage.getItem(CHOICE_STORAGE);
    const usable = this.datasets.filter((d) => d.version);
    const fallback = usable.find((d) => d.default);
    const keep = usable.find((d) => d.dataset_id === stored) ? stored : fallback ? fallback.dataset_id : BUILT_IN;
    this.renderPicker(keep);
    await this.choose(keep, false);
  }

  renderPicker(selected) {
    const options = [];
    // Without a dataset_id a job asks the tenant's default: the built-in data is
    // reachable only while the tenant has none.
    if (!this.datasets.some((d) => d.default)) options.push(el("option", { value: BUILT_IN }, "Built-in sample data"));
    const tally = (labels) => labels.reduce((m, l) => m.set(l, (m.get(l) || 0) + 1), new Map());
    const named = tally(this.datasets.map((d) => d.name));
    let labels = this.datasets.map((d) => (d.default ? `${d.name} (default)` : d.name)
      + (named.get(d.name) > 1 ? ` — ${distinction(d)}` : d.version ? "" : ` (${d.status})`));
    // Made in the same second from the same file: the id is all that differs.
    const same = tally(labels);
    labels = labels.map((l, i) => (same.get(l) > 1 ? `${l}, #${this.datasets[i].dataset_id.slice(0, 8)}` : l));
    this.datasets.forEach((d, i) => options.push(el("option", {
      value: d.dataset_id, disabled: !d.version, "data-default": d.default ? "true" : null,
    }, labels[i])));
    this.ui.picker.replaceChildren(...options);
    this.ui.picker.value = selected;
    this.renderFailed();
  }

  /** Datasets whose first import failed: why, and a button that deletes each. */
  renderFailed() {
    const failed = this.datasets.filter((d) => d.status === "failed");
    this.ui.failed.replaceChildren(...failed.map((d) => el("li", { "data-testid": "failed-dataset", "data-dataset": d.dataset_id },
      el("div", {}, el("strong", {}, d.name), el("span", { class: "muted" }, ` ${distinction(d)}`)),
      el("div", { class: "bad" }, (d.error && (d.error.detail || d.error.title)) || "the import failed"),
      el("button", { type: "button", class: "link-button", "data-testid": "delete-dataset", onclick: (ev) => this.remove(d, ev.target) }, "Delete"))));
  }

  async remove(dataset, button) {
    button.disabled = true;
    try {
      await api(datasetPath(dataset.dataset_id), { method: "DELETE" });
    } catch (err) {
      button.disabled = false;
      this.report(err);
      return;
    }
    await this.load();
  }

  async choose(datasetId, remember = true) {
    if (remember) localStorage.setItem(CHOICE_STORAGE, datasetId);
    this.ui.picker.value = datasetId;
    if (!datasetId) {
      this.ui.info.textContent = "Questions go to the deployment's built-in data.";
      this.ui.schema.replaceChildren(el("p", { class: "muted" }, "Upload a file to ask about your own data."));
      this.ui.suggestions.replaceChildren();
      return;
    }
    let dataset;
    try {
      dataset = await api(datasetPath(datasetId));
    } catch (err) {
      this.report(err);
      return;
    }
    this.ui.info.textContent = `${count(dataset.tables.length, "table")}, version ${dataset.version}`
      + (dataset.default ? ", the default" : "");
    this.renderWarnings(dataset);
    this.renderSchema(dataset);
    this.renderSuggestions(dataset);
  }

  renderWarnings(dataset) {
    // The API says a table's as "<table>: <message>", the dataset's own as the message
    // (DatasetOut.warnings).
    const tables = new Set((dataset.tables || []).map((t) => t.name));
    this.ui.warnings.replaceChildren(...(dataset.warnings || []).map((w) => {
      const at = w.indexOf(": ");
      const table = at > 0 && tables.has(w.slice(0, at)) ? w.slice(0, at) : null;
      return el("li", { "data-testid": "dataset-warning" },
        ...(table ? [el("code", {}, table), ` ${w.slice(at + 2)}`] : [w]));
    }));
  }

  /** The offer to re-type a text column as its `suggestion` says, or null. */
  fixFor(dataset, table, col) {
    const suggestion = col.suggestion;
    if (!suggestion || !suggestion.type || !TEXT_TYPE.test(col.type || "")) return null;
    return el("button", {
      type: "button", class: "link-button fix", "data-testid": "column-fix",
      onclick: (ev) => this.retype(dataset, table, col, suggestion, ev.target),
    }, offerText(suggestion));
  }

  /**
   * Re-type one column as suggested: PATCH it (refused: the API's detail, say the row and
   * value that does not convert), then follow the import of the next version and show it.
   */
  async retype(dataset, table, col, suggestion, button) {
    button.disabled = true;
    const text = el("div", { class: "muted", "data-testid": "fix-state" }, `Re-typing ${table}.${col.name} as ${suggestion.type}…`);
    this.ui.status.replaceChildren(text);
    const asked = { type: suggestion.type, ...(suggestion.format ? { format: suggestion.format } : {}) };
    try {
      await api(datasetPath(dataset.dataset_id), { method: "PATCH", body: { tables: { [table]: { columns: { [col.name]: asked } } } } });
    } catch (err) {
      text.textContent = `${table}.${col.name} was not re-typed: ${err.detail || err.message}`;
      text.classList.add("bad");
      button.disabled = false;
      return;
    }
    text.textContent = `Importing version ${dataset.version + 1} with ${col.name} as ${suggestion.type}…`;
    let after;
    try {
      ({ dataset: after } = await followImport(dataset.dataset_id, () => {}));
    } catch (err) {
      text.textContent = `Re-typing failed: ${err.detail || err.message}`;
      text.classList.add("bad");
      return;
    }
    if (after.version === dataset.version) {
      text.textContent = `Re-typing failed: ${(after.error && after.error.detail) || "the import failed"}`;
      text.classList.add("bad");
      return;
    }
    await this.load();
    if (this.ui.picker.value !== after.dataset_id) await this.choose(after.dataset_id, false);
    text.textContent = `${table}.${col.name} is ${suggestion.type} from version ${after.version}.`;
    this.ui.status.replaceChildren(text);
  }

  renderSchema(dataset) {
    const tables = (dataset.tables || []).map((t) => el("details", { class: "schema-table", "data-testid": "schema-table", "data-table": t.name },
      el("summary", {}, el("span", { class: "schema-name" }, t.name), el("span", { class: "muted" }, ` ${fmtInt(t.rows)} rows`)),
      t.description ? el("p", { class: "muted schema-description" }, t.description) : null,
      el("ul", { class: "schema-columns" }, (t.columns || []).map((c) => el("li", { "data-testid": "schema-column", "data-column": c.name },
        el("div", {}, el("code", {}, c.name), " ", el("span", { class: "chip", "data-testid": "column-type" }, c.type)),
        c.description ? el("div", { class: "schema-description" }, c.description) : null,
        this.fixFor(dataset, t.name, c),
        el("div", { class: "muted schema-profile", "data-testid": "column-profile" }, columnSummary(c)))))));
    this.ui.schema.replaceChildren(...tables);
  }

  renderSuggestions(dataset) {
    this.ui.suggestions.replaceChildren(...suggestQuestions(dataset).map((q) => el("button", {
      type: "button", class: "suggestion", "data-testid": "suggestion", onclick: () => this.askQuestion(q),
    }, q)));
  }

  async upload() {
    const { ui } = this;
    const files = [...(ui.files.files || [])];
    const name = ui.name.value.trim();
    if (!files.length || !name) {
      this.status("Choose one or more files and give the dataset a name.");
      return;
    }
    const form = new FormData();
    form.append("name", name);
    for (const file of files) form.append("file", file, file.name);
    const total = files.reduce((n, f) => n + f.size, 0);
    ui.uploadButton.disabled = true;
    const bar = el("progress", { max: 1, value: 0, "data-testid": "upload-progress" });
    const text = el("div", { class: "muted", "data-testid": "upload-state" }, `Uploading 0% of ${mb(total)}`);
    ui.status.replaceChildren(bar, text);
    try {
      const created = await uploadForm(form, (loaded, all) => {
        const percent = Math.floor((100 * loaded) / all);
        bar.value = loaded / all;
        bar.dataset.uploaded = String(percent);
        text.textContent = `Uploading ${percent}% of ${mb(all)}`;
      });
      bar.value = 0;
      bar.removeAttribute("value"); // indeterminate until the import reports
      text.textContent = "Uploaded; importing…";
      const { ending, dataset } = await followImport(created.dataset_id, (type, data) => {
        if (!data || !data.table) return;
        if (data.percent !== null && data.percent !== undefined) bar.value = data.percent / 100;
        const rows = data.rows === null || data.rows === undefined ? "" : `: ${fmtInt(data.rows)} rows`;
        text.textContent = `Importing ${data.table}${rows}${data.done ? " (done)" : ""}`;
      });
      if (ending === "failed" || dataset.status === "failed") {
        const detail = (dataset.error && (dataset.error.detail || dataset.error.title)) || "the import failed";
        text.textContent = `Import failed: ${detail}`;
        text.classList.add("bad");
        bar.value = 0;
        await this.load(); // the failed dataset is listed, to be deleted
        return;
      }
      bar.value = 1;
      text.textContent = `Ready: ${dataset.name}, ${count(dataset.tables.length, "table")}, `
        + count(dataset.tables.reduce((n, t) => n + (t.rows || 0), 0), "row");
      ui.files.value = "";
      ui.name.value = "";
      await this.load();
      await this.choose(dataset.dataset_id);
    } catch (err) {
      text.textContent = `Upload failed: ${err.detail || err.message}`;
      text.classList.add("bad");
      this.report(err);
    } finally {
      ui.uploadButton.disabled = false;
    }
  }

  status(message) {
    this.ui.status.replaceChildren(el("p", { class: "muted" }, message));
  }
}
