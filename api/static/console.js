// The Sunrise console: API key, chat with live progress, conversations,
// and the wiring of the sidebar panels. No framework; see api.js,
// render.js, progress.js and panels.js for the parts.

import { api, getKey, setKey, watchJob } from "./api.js";
import { el, renderAnswer } from "./render.js";
import { Progress } from "./progress.js";
import { initBatches, loadUsage } from "./panels.js";
import { DataPanel } from "./datasets.js";

const $ = (id) => document.getElementById(id);
const ui = {
  keyForm: $("key-form"), key: $("api-key"), keyState: $("key-state"),
  error: $("error"), errorText: $("error-text"),
  conversations: $("conversations"), more: $("conversations-more"),
  title: $("conversation-title"), jobStatus: $("job-status"),
  history: $("history"), current: $("current"), currentQuestion: $("current-question"),
  answer: $("answer"), emptyHint: $("empty-hint"), thread: $("thread"),
  askForm: $("ask-form"), question: $("question"), ask: $("ask"), cancel: $("cancel"),
  usage: $("usage"),
};
const progress = new Progress($("progress"));
const state = { conversationId: null, job: null, cursor: null };

// ---- errors -------------------------------------------------------------

function showError(err) {
  let text;
  ui.keyForm.classList.remove("needs-key");
  if (err.status === 401) {
    text = "The API key is missing or was rejected. Enter a valid key above and save it.";
    ui.keyForm.classList.add("needs-key");
    ui.keyState.textContent = getKey() ? "key rejected" : "no key saved";
    ui.key.focus();
  } else if (err.status === 429) {
    const said = (err.detail || err.title).replace(/\.+$/, "");
    const wait = err.retryAfter && !/retry/i.test(said) ? ` Retry after ${err.retryAfter} s.` : "";
    text = `Rate limited (429): ${said}.${wait}`;
  } else if (err.status === 0) {
    text = `Network error: ${err.detail}. Check that the API is running.`;
  } else if (err.status) {
    text = `${err.title} (${err.status})${err.detail ? `: ${err.detail}` : ""}`;
  } else {
    text = err.message || String(err);
  }
  ui.errorText.textContent = text;
  ui.error.dataset.status = err.status ?? "";
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.errorText.textContent = "";
}

$("error-dismiss").addEventListener("click", clearError);

// ---- API key ------------------------------------------------------------

function showKeyState() {
  ui.keyState.textContent = getKey() ? "key saved" : "no key saved";
}

ui.keyForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  setKey(ui.key.value.trim());
  ui.key.value = "";
  ui.key.placeholder = getKey() ? "saved (paste to replace)" : "paste your key";
  ui.keyForm.classList.remove("needs-key");
  clearError();
  showKeyState();
  refreshSidebar();
  dataPanel.load().catch(sidebarError);
});

// ---- conversations ------------------------------------------------------

const when = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "");

function conversationItem(conv) {
  const del = el("button", {
    type: "button", class: "conv-delete", "data-testid": "delete-conversation",
    "aria-label": `Delete ${conv.title || "conversation"}`, title: "Delete",
  }, "×");
  let armed = null;
  del.addEventListener("click", async () => {
    if (!armed) {
      // Two clicks delete: no modal dialogs, which automated browsers dismiss.
      del.textContent = "Delete?";
      del.classList.add("armed");
      del.setAttribute("data-testid", "confirm-delete");
      armed = setTimeout(() => {
        armed = null;
        del.textContent = "×";
        del.classList.remove("armed");
        del.setAttribute("data-testid", "delete-conversation");
      }, 4000);
      return;
    }
    clearTimeout(armed);
    try {
      await api(`/v1/conversations/${encodeURIComponent(conv.conversation_id)}`, { method: "DELETE" });
      li.remove();
      if (state.conversationId === conv.conversation_id) newConversation();
    } catch (err) {
      showError(err);
    }
  });
  const open = el("button", { type: "button", class: "conv-open", "data-testid": "open-conversation" },
    el("span", { class: "conv-title" }, conv.title || "Untitled"),
    el("span", { class: "conv-when" }, when(conv.updated_at || conv.created_at)));
  open.addEventListener("click", () => openConversation(conv.conversation_id));
  const li = el("li", {
    "data-testid": "conversation-item", "data-conversation-id": conv.conversation_id,
    class: conv.conversation_id === state.conversationId ? "active" : "",
  }, open, del);
  return li;
}

async function loadConversations(append = false) {
  const query = append && state.cursor ? `?cursor=${encodeURIComponent(state.cursor)}` : "";
  const data = await api(`/v1/conversations${query}`);
  const items = (data.items || []).map(conversationItem);
  if (append) ui.conversations.append(...items);
  else ui.conversations.replaceChildren(...items);
  if (!ui.conversations.children.length) {
    ui.conversations.append(el("li", { class: "muted empty" }, "No conversations yet."));
  }
  state.cursor = data.next_cursor || null;
  ui.more.hidden = !state.cursor;
}

function markActive() {
  for (const li of ui.conversations.children) {
    li.classList.toggle("active", li.dataset.conversationId === state.conversationId);
  }
}

function stopWatching() {
  if (state.job && state.job.handle) state.job.handle.stop();
  state.job = null;
  setRunning(false);
}

function resetThread(title) {
  stopWatching();
  ui.history.replaceChildren();
  ui.current.hidden = true;
  ui.answer.replaceChildren();
  ui.jobStatus.hidden = true;
  ui.title.textContent = title;
  ui.emptyHint.hidden = false;
}

function newConversation() {
  state.conversationId = null;
  resetThread("New conversation");
  markActive();
  ui.question.focus();
}

async function openConversation(id) {
  clearError();
  let conv;
  try {
    conv = await api(`/v1/conversations/${encodeURIComponent(id)}`);
  } catch (err) {
    showError(err);
    return;
  }
  state.conversationId = conv.conversation_id;
  resetThread(conv.title || "Untitled conversation");
  markActive();
  const messages = conv.messages || [];
  ui.emptyHint.hidden = messages.length > 0;
  for (const msg of messages) {
    if (msg.role === "user") {
      ui.history.append(el("div", { class: "bubble user", "data-testid": "message-user" }, msg.text));
    } else {
      const bubble = el("div", { class: "bubble assistant answer", "data-testid": "message-assistant" });
      ui.history.append(bubble);
      renderAnswer(bubble, msg.text, msg.charts || [], { numbers: msg.numbers });
    }
  }
  ui.thread.scrollTop = ui.thread.scrollHeight;
}

ui.more.addEventListener("click", () => loadConversations(true).catch(showError));
$("new-conversation").addEventListener("click", newConversation);

// ---- asking -------------------------------------------------------------

function setRunning(running) {
  ui.ask.disabled = running;
  ui.cancel.hidden = !running;
  ui.cancel.disabled = false;
  ui.cancel.textContent = "Cancel";
}

function setStatus(status) {
  ui.jobStatus.hidden = false;
  ui.jobStatus.textContent = status;
  ui.jobStatus.className = `status-pill ${status}`;
}

/** Move the finished current turn into the history so #answer is free again. */
function archiveCurrentTurn() {
  if (ui.current.hidden) return;
  const answer = el("div", { class: "bubble assistant answer", "data-testid": "message-assistant" });
  answer.append(...ui.answer.childNodes);
  const trace = el("div", { class: "progress" });
  trace.append(...$("progress").childNodes);
  const details = trace.querySelector("details");
  if (details) details.open = false;
  ui.history.append(
    el("div", { class: "bubble user", "data-testid": "message-user" }, ui.currentQuestion.textContent),
    trace, answer);
}

const newIdempotencyKey = () =>
  (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`);

function onJobEvent(job, type, data) {
  if (type === "tool_call" && data.query_id !== undefined && data.sql) job.sql.set(data.query_id, data.sql);
  if (type === "answer_delta") {
    renderAnswer(ui.answer, data.text || "", [], { streaming: true });
    ui.thread.scrollTop = ui.thread.scrollHeight;
  }
  if (type === "queued" || type === "status") setStatus(data.status || "queued");
  if (type === "started" || type === "llm_call" || type === "thinking" || type === "tool_call") setStatus("running");
  progress.event(type, data);
}

const scrollToEnd = () => {
  ui.thread.scrollTop = ui.thread.scrollHeight;
};

function showFinal(job, final) {
  setStatus(final.status);
  progress.finish(final);
  const result = final.result || {};
  const sqlFor = (queryId) => job.sql.get(queryId);
  if (final.status === "succeeded") {
    renderAnswer(ui.answer, result.answer_text || "", result.charts || [], { sqlFor, numbers: result.numbers })
      .then(scrollToEnd);
    if (result.truncated) {
      ui.answer.append(el("p", { class: "muted" }, "The answer was cut short; try a narrower question."));
    }
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
  scrollToEnd();
}

async function ask(text) {
  clearError();
  archiveCurrentTurn();
  ui.emptyHint.hidden = true;
  ui.current.hidden = false;
  ui.currentQuestion.textContent = text;
  ui.answer.replaceChildren(el("p", { class: "muted thinking" }, "Thinking…"));
  progress.reset();
  setRunning(true);
  ui.question.value = "";

  const body = { message: text };
  if (state.conversationId) body.conversation_id = state.conversationId;
  const datasetId = dataPanel.selectedId();
  if (datasetId) body.dataset_id = datasetId;
  // The turn is ours from the click on, so Cancel works even before the job has an id.
  const job = { id: null, sql: new Map(), handle: null, cancelWanted: false };
  state.job = job;
  let created;
  try {
    created = await api("/v1/jobs", { method: "POST", body, headers: { "Idempotency-Key": newIdempotencyKey() } });
  } catch (err) {
    if (state.job !== job) return;
    state.job = null;
    ui.current.hidden = true;
    ui.question.value = text;
    setRunning(false);
    showError(err);
    return;
  }
  // Switched to another conversation meanwhile: the job runs on and shows up in its history.
  if (state.job !== job) return;
  const isNew = state.conversationId !== created.conversation_id;
  state.conversationId = created.conversation_id;
  if (isNew) {
    ui.title.textContent = text.length > 80 ? `${text.slice(0, 77)}…` : text;
    loadConversations().then(markActive).catch(showError);
  }
  setStatus(created.status || "queued");
  job.id = created.job_id;
  let pollNoted = false;
  job.handle = watchJob(job.id, {
    onEvent: (type, data) => onJobEvent(job, type, data),
    onMode: (mode) => {
      if (mode === "poll" && !pollNoted) {
        pollNoted = true;
        progress.note("Live events unavailable: waiting for the result by long-polling.");
      }
    },
  });
  if (job.cancelWanted) requestCancel(job);
  try {
    const final = await job.handle.done;
    if (final && state.job === job) showFinal(job, final);
  } catch (err) {
    if (state.job === job) showError(err);
  } finally {
    if (state.job === job) {
      state.job = null;
      setRunning(false);
      refreshSidebar();
    }
  }
}

ui.askForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = ui.question.value.trim();
  if (text && !state.job) ask(text);
});

ui.question.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    ui.askForm.requestSubmit();
  }
});

/** Ask the API to cancel `job`; a 409 means it ended meanwhile (its terminal event is on the way). */
async function requestCancel(job) {
  try {
    await api(`/v1/jobs/${encodeURIComponent(job.id)}/cancel`, { method: "POST" });
    progress.note("Cancel requested: it takes effect at the next round boundary.");
  } catch (err) {
    // 409: the job ended meanwhile; its terminal event is on the way.
    if (err.status !== 409 && state.job === job) {
      showError(err);
      ui.cancel.disabled = false;
      ui.cancel.textContent = "Cancel";
    }
  }
}

ui.cancel.addEventListener("click", () => {
  const job = state.job;
  if (!job) return;
  ui.cancel.disabled = true;
  ui.cancel.textContent = "Cancelling…";
  if (job.id) requestCancel(job);
  else job.cancelWanted = true; // sent as soon as the job is accepted
});

// ---- sidebar ------------------------------------------------------------

/** Errors of background loads: with no key saved yet, a 401 is a prompt, not an alarm. */
function sidebarError(err) {
  if (err.status === 401 && !getKey()) {
    ui.keyForm.classList.add("needs-key");
    ui.keyState.textContent = "enter your API key";
    return;
  }
  showError(err);
}

function refreshSidebar() {
  // Loaded even without a key: a server may run with authentication disabled.
  loadConversations().catch(sidebarError);
  loadUsage(ui.usage).catch(sidebarError);
}

$("usage-refresh").addEventListener("click", () => loadUsage(ui.usage).catch(showError));

const dataPanel = new DataPanel({
  picker: $("dataset-picker"), info: $("dataset-info"), suggestions: $("suggestions"),
  schema: $("schema"), uploadForm: $("upload-form"), name: $("upload-name"),
  files: $("upload-files"), uploadButton: $("upload-submit"), status: $("upload-status"),
}, {
  ask: (question) => {
    if (state.job) return;
    ui.question.value = question;
    ui.askForm.requestSubmit();
  },
  report: showError,
});
$("datasets-refresh").addEventListener("click", () => dataPanel.load().catch(showError));

initBatches({
  form: $("batch-form"),
  questions: $("batch-questions"),
  file: $("batch-file"),
  title: $("batch-title"),
  status: $("batch-status"),
  report: showError,
  completed: () => refreshSidebar(),
});

showKeyState();
if (getKey()) ui.key.placeholder = "saved (paste to replace)";
refreshSidebar();
dataPanel.load().catch(sidebarError);
