// Rendering of answers: escaped text with light formatting, {{chart:N}}
// tokens replaced by charts (vega-embed) or tables, and per-chart SQL/data.

const CHART_TOKEN = /\{\{\s*chart\s*:\s*(\d+)\s*\}\}/g;
const MAX_TABLE_ROWS = 200;
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

/** Build an element; text children become text nodes, so nothing is parsed as HTML. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });
export const fmtInt = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString());
export const fmtUsd = (n) => (n === null || n === undefined ? "–" : `$${Number(n).toFixed(4)}`);
export const fmtMs = (ms) =>
  ms === null || ms === undefined ? "–" : ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;

// Unsupported figures travel through the text between these two private-use
// characters (see markFigures) until they become marked spans.
const MARK_OPEN = "\uE000";
const MARK_CLOSE = "\uE001";
const MARKED = /\uE000([^\uE001]*)\uE001/g;
export const NOT_FOUND = "not found in any query result";

/**
 * `text` with every figure of the faithfulness check that no query result supports
 * (`numbers.unsupported`, positions in code points) between the two markers. A
 * figure whose position no longer matches the text is left unmarked.
 */
function markFigures(text, numbers) {
  const figures = [...((numbers && numbers.unsupported) || [])].sort((a, b) => b.position - a.position);
  if (!figures.length) return text;
  const chars = Array.from(text);
  for (const figure of figures) {
    const length = Array.from(figure.text).length;
    if (chars.slice(figure.position, figure.position + length).join("") !== figure.text) continue;
    chars.splice(figure.position + length, 0, MARK_CLOSE);
    chars.splice(figure.position, 0, MARK_OPEN);
  }
  return chars.join("");
}

/** Plain text, with marked figures as subtly underlined spans carrying a tooltip. */
function marked(text) {
  const parts = [];
  let last = 0;
  for (const m of text.matchAll(MARKED)) {
    if (m.index > last) parts.push(text.slice(last, m.index));
    parts.push(el("span", { class: "unsupported-figure", title: NOT_FOUND, "data-testid": "unsupported-figure" }, m[1]));
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** `**bold**` and `code` inside one line of already-plain text. */
function inline(line) {
  const parts = [];
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`/g;
  let last = 0;
  for (const m of line.matchAll(pattern)) {
    if (m.index > last) parts.push(...marked(line.slice(last, m.index)));
    parts.push(m[1] !== undefined ? el("strong", {}, marked(m[1])) : el("code", {}, marked(m[2])));
    last = m.index + m[0].length;
  }
  if (last < line.length) parts.push(...marked(line.slice(last)));
  return parts;
}

const BULLET = /^\s*[-*•]\s+/;

/** Paragraphs (blank-line separated), line breaks, and runs of bullet lines as lists. */
function textBlocks(text) {
  const blocks = [];
  for (const para of text.split(/\n\s*\n/)) {
    let p = null;
    let ul = null;
    for (const line of para.split("\n")) {
      if (line.trim() === "") continue;
      if (BULLET.test(line)) {
        if (!ul) blocks.push((ul = el("ul")));
        ul.append(el("li", {}, inline(line.replace(BULLET, ""))));
        p = null;
      } else {
        if (p) p.append(el("br"));
        else blocks.push((p = el("p")));
        p.append(...inline(line));
        ul = null;
      }
    }
  }
  return blocks;
}

function columnsOf(chart) {
  const cols = (chart.columns || []).map((c) => (typeof c === "string" ? c : c && c.name)).filter(Boolean);
  if (cols.length) return cols;
  const first = (chart.data || [])[0];
  return first ? Object.keys(first) : [];
}

/** A value a chart can show: a struct or list (nested JSON data) as its JSON text, never "[object Object]". */
const plainValue = (value) => (value !== null && typeof value === "object" ? JSON.stringify(value) : value);

const plainRows = (rows) =>
  rows.map((row) =>
    row !== null && typeof row === "object" && !Array.isArray(row)
      ? Object.fromEntries(Object.entries(row).map(([key, value]) => [key, plainValue(value)]))
      : row,
  );

function cell(value) {
  if (typeof value === "number") return el("td", { class: "num" }, numberFormat.format(value));
  if (value === null || value === undefined) return el("td", { class: "null" }, "null");
  return el("td", {}, String(plainValue(value)));
}

/** An HTML table of a chart's rows (capped, with a note when cut). */
export function dataTable(chart) {
  const rows = chart.data || [];
  const cols = columnsOf(chart);
  const table = el(
    "table",
    { class: "data-table" },
    el("thead", {}, el("tr", {}, cols.map((c) => el("th", {}, c)))),
    el("tbody", {}, rows.slice(0, MAX_TABLE_ROWS).map((r) => el("tr", {}, cols.map((c) => cell(r[c]))))),
  );
  const wrap = el("div", { class: "table-wrap" }, table);
  if (rows.length > MAX_TABLE_ROWS) {
    wrap.append(el("p", { class: "muted" }, `First ${MAX_TABLE_ROWS} of ${rows.length} rows.`));
  } else if (rows.length === 0) {
    wrap.append(el("p", { class: "muted" }, "No rows."));
  }
  return wrap;
}

function vegaSpec(chart) {
  const spec = structuredClone(chart.vega_lite);
  if (!spec.data) spec.data = { values: chart.data || [] };
  if (Array.isArray(spec.data.values)) spec.data.values = plainRows(spec.data.values);
  if (spec.width === undefined) spec.width = "container";
  if (spec.height === undefined) spec.height = 260;
  return spec;
}

/** Draw one chart into `target` (already in the document, so it has a width). */
async function drawChart(target, chart) {
  const useTable = chart.type === "table" || !chart.vega_lite || typeof window.vegaEmbed !== "function";
  if (useTable) {
    target.classList.add("chart-as-table");
    target.append(dataTable(chart));
    return;
  }
  try {
    await window.vegaEmbed(target, vegaSpec(chart), {
      actions: false,
      renderer: "svg",
      ast: true, // interpret expressions instead of eval: works under a strict CSP
      config: { font: FONT, axis: { labelFontSize: 11, titleFontSize: 12 }, title: { fontSize: 13 } },
    });
  } catch (err) {
    target.replaceChildren(
      el("p", { class: "muted" }, `Could not draw this chart (${err.message}); its data:`),
      dataTable(chart),
    );
  }
}

/** Whether vega-embed will draw the chart with its own title (a caption would repeat it). */
const titledByVega = (chart) => chart.type !== "table" && Boolean(chart.vega_lite && chart.vega_lite.title);

function chartFigure(chart, index, sqlFor, pending) {
  const target = el("div", { class: "chart", "data-testid": "chart", "data-chart-type": chart.type });
  const sqlBox = el("pre", { class: "chart-sql", "data-testid": "chart-sql", hidden: true });
  const dataBox = el("div", { class: "chart-data", "data-testid": "chart-data", hidden: true });
  const toggle = (box, button, label, fill) => () => {
    if (!box.dataset.filled) {
      fill();
      box.dataset.filled = "1";
    }
    box.hidden = !box.hidden;
    button.textContent = `${box.hidden ? "Show" : "Hide"} ${label}`;
  };
  const sqlButton = el("button", { type: "button", class: "link-button", "data-testid": "toggle-sql" }, "Show SQL");
  const dataButton = el("button", { type: "button", class: "link-button", "data-testid": "toggle-data" }, "Show data");
  sqlButton.addEventListener("click", toggle(sqlBox, sqlButton, "SQL", () => {
    const sql = (sqlFor && sqlFor(chart.query_id)) || chart.sql;
    sqlBox.textContent = sql || `SQL of query ${chart.query_id} was not seen (it is shown for answers followed live).`;
  }));
  dataButton.addEventListener("click", toggle(dataBox, dataButton, "data", () => dataBox.append(dataTable(chart))));
  pending.push(() => drawChart(target, chart));
  const rows = (chart.data || []).length;
  return el(
    "figure",
    { class: "chart-block", "data-chart-index": index },
    chart.title && !titledByVega(chart) ? el("figcaption", {}, chart.title) : null,
    target,
    // A table chart already shows its data.
    el("div", { class: "chart-tools" }, sqlButton, chart.type === "table" ? null : dataButton,
      el("span", { class: "muted" }, `query ${chart.query_id ?? "?"} · ${rows} row${rows === 1 ? "" : "s"}`)),
    sqlBox,
    dataBox,
  );
}

/**
 * Replace `container`'s content with the rendered answer. `container` must be
 * in the document (vega-embed measures it). While `streaming`, chart tokens
 * become placeholders and a half-written token at the end is hidden.
 * `sqlFor(query_id)` returns the SQL seen for a query, if any. `numbers` is the
 * answer's faithfulness check: its unsupported figures get a subtle mark.
 */
export function renderAnswer(container, text, charts = [], { sqlFor = null, streaming = false, numbers = null } = {}) {
  let body = markFigures(text || "", numbers);
  if (streaming) body = body.replace(/\{\{[^}]*\}?$/, "");
  charts = charts || [];
  const pending = [];
  const used = new Set();
  const nodes = [];
  let last = 0;
  for (const m of body.matchAll(CHART_TOKEN)) {
    nodes.push(...textBlocks(body.slice(last, m.index)));
    const index = Number(m[1]);
    if (charts[index]) {
      if (!used.has(index)) nodes.push(chartFigure(charts[index], index, sqlFor, pending));
      used.add(index);
    } else if (streaming) {
      nodes.push(el("div", { class: "chart-placeholder" }, `Chart ${index + 1} appears when the answer is complete.`));
    }
    last = m.index + m[0].length;
  }
  nodes.push(...textBlocks(body.slice(last)));
  charts.forEach((chart, index) => {
    if (!used.has(index)) nodes.push(chartFigure(chart, index, sqlFor, pending));
  });
  container.replaceChildren(...nodes);
  return Promise.all(pending.map((draw) => draw()));
}
