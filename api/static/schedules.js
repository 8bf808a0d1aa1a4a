// Sidebar panel: the caller's schedules — next run, last runs with their delivery
// status, pause/resume and run now (docs/schedules.md).

import { api } from "./api.js";
import { el } from "./render.js";

const RUNS_SHOWN = 3;

function deliveryText(run) {
  const parts = (run.deliveries || []).map((d) => `${d.type} ${d.status}`);
  return parts.length ? parts.join(", ") : run.reason || "";
}

function runItem(run) {
  return el("li", { class: `schedule-run run-${run.status}`, "data-testid": "schedule-run",
                    "data-status": run.status },
    el("span", { class: "run-slot" }, (run.slot || "").replace("T", " ").replace(/\.\d+Z$|Z$/, "")),
    " ", el("strong", {}, run.status), " ",
    el("span", { class: "muted" }, deliveryText(run)));
}

/** Fetch `GET /v1/schedules` into `root`; the buttons act and reload. */
export async function loadSchedules(root, { report }) {
  const data = await api("/v1/schedules");
  const items = data.schedules || [];
  if (!items.length) {
    root.replaceChildren(el("p", { class: "muted", "data-testid": "schedules-empty" },
      "No schedules yet: POST /v1/schedules or `sunrise schedules add`."));
    return;
  }
  const reload = () => loadSchedules(root, { report }).catch(report);
  const act = (fn) => async () => {
    try { await fn(); } catch (err) { report(err); }
    reload();
  };
  root.replaceChildren(...items.map((s) => {
    const base = `/v1/schedules/${encodeURIComponent(s.schedule_id)}`;
    const toggle = el("button", { type: "button", "data-testid": "schedule-toggle" },
      s.paused ? "Resume" : "Pause");
    toggle.addEventListener("click", act(() => api(base, { method: "PATCH",
      body: { paused: !s.paused } })));
    const runNow = el("button", { type: "button", "data-testid": "schedule-run-now" }, "Run now");
    runNow.addEventListener("click", act(() => api(`${base}/run`, { method: "POST" })));
    const next = s.paused ? "paused" : `next ${(s.next_run_at || "").replace("T", " ").replace("Z", " UTC")}`;
    return el("div", { class: "schedule", "data-testid": "schedule", "data-id": s.schedule_id },
      el("div", { class: "schedule-head" }, el("strong", {}, s.name), " ",
        el("span", { class: "muted" }, `${s.cron} (${s.timezone})`)),
      el("div", { class: "muted", "data-testid": "schedule-next" }, next),
      el("ul", { class: "schedule-runs" }, (s.last_runs || []).slice(0, RUNS_SHOWN).map(runItem)),
      el("div", { class: "schedule-actions" }, toggle, " ", runNow));
  }));
}
