// The Sunrise console: API key, chat with live progress, conversations,
// and the wiring of the sidebar panels. No framework; see api.js, render.js,
// progress.js, panels.js, datasets.js, conversation_list.js, thread_view.js
// and error_banner.js for the parts.

import { api, getKey, setKey, watchJob } from "./api.js";
import { dataAsOfNote, el, renderAnswer } from "./render.js";
import { Progress } from "./progress.js";
import { initBatches, loadUsage } from "./panels.js";
import { loadSchedules } from "./schedules.js";
import { DataPanel } from "./datasets.js";
import { ConversationList } from "./conversation_list.js";
import { clearError, showError, showKeyState } from "./error_banner.js";
import { ThreadView } from "./thread_view.js";
import { ReviewPanel } from "./trust.js";
import { initSignIn } from "./sign_in.js";

const $ = (id) => document.getElementById(id);
const ui = {
  keyForm: $("key-form"), key: $("api-key"), keyState: $("key-state"),
  conversations: $("conversations"), more: $("conversations-more"),
  title: $("conversation-title"), jobStatus: $("job-status"),
  history: $("history"), current: $("current"), currentQuestion: $("current-question"),
  answer: $("answer"), emptyHint: $("empty-hint"), thread: $("thread"),
  askForm: $("ask-form"), question: $("question"), ask: $("ask"), cancel: $("cancel"),
  usage: $("usage"),
};
const progress = new Progress($("progress"));
const view = new ThreadView(ui, progress, $("progress"), { onChoose: (text) => { if (!state.job) ask(text); } });
const state = { conversationId: null, job: null };

// ---- API key ------------------------------------------------------------

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

const conversations = new ConversationList(ui.conversations, ui.more, {
  activeId: () => state.conversationId,
  open: (id) => openConversation(id),
  deleted: (id) => { if (state.conversationId === id) newConversation(); },
  report: showError,
});

function stopWatching() {
  if (state.job && state.job.handle) state.job.handle.stop();
  state.job = null;
  view.setRunning(false);
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
  conversations.markActive();
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
  conversations.markActive();
  const messages = conv.messages || [];
  ui.emptyHint.hidden = messages.length > 0;
  for (const msg of messages) {
    if (msg.role === "user") {
      ui.history.append(el("div", { class: "bubble user", "data-testid": "message-user" }, msg.text));
    } else {
      const bubble = el("div", { class: "bubble assistant answer", "data-testid": "message-assistant" });
      ui.history.append(bubble);
      renderAnswer(bubble, msg.text, msg.charts || [], { numbers: msg.numbers });
      const asOf = dataAsOfNote(msg.data_as_of);
      if (asOf) bubble.append(asOf);
    }
  }
  view.scrollToEnd();
}

$("new-conversation").addEventListener("click", newConversation);

// ---- asking -------------------------------------------------------------

const newIdempotencyKey = () =>
  (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`);

function onJobEvent(job, type, data) {
  if (type === "tool_call" && data.query_id !== undefined && data.sql) job.sql.set(data.query_id, data.sql);
  if (type === "answer_delta") {
    renderAnswer(ui.answer, data.text || "", [], { streaming: true });
    view.scrollToEnd();
  }
  if (type === "queued" || type === "status") view.setStatus(data.status || "queued");
  if (type === "started" || type === "llm_call" || type === "thinking" || type === "tool_call") view.setStatus("running");
  progress.event(type, data);
}

async function ask(text) {
  clearError();
  view.archiveCurrentTurn();
  ui.emptyHint.hidden = true;
  ui.current.hidden = false;
  ui.currentQuestion.textContent = text;
  ui.answer.replaceChildren(el("p", { class: "muted thinking" }, "Thinking…"));
  progress.reset();
  view.setRunning(true);
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
    view.setRunning(false);
    showError(err);
    return;
  }
  // Switched to another conversation meanwhile: the job runs on and shows up in its history.
  if (state.job !== job) return;
  const isNew = state.conversationId !== created.conversation_id;
  state.conversationId = created.conversation_id;
  if (isNew) {
    ui.title.textContent = text.length > 80 ? `${text.slice(0, 77)}…` : text;
    conversations.load().catch(showError);
  }
  view.setStatus(created.status || "queued");
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
    if (final && state.job === job) view.showFinal(job, final);
  } catch (err) {
    if (state.job === job) showError(err);
  } finally {
    if (state.job === job) {
      state.job = null;
      view.setRunning(false);
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
  conversations.load().catch(sidebarError);
  loadUsage(ui.usage).catch(sidebarError);
  loadSchedules($("schedules"), { report: showError }).catch(sidebarError);
}

$("usage-refresh").addEventListener("click", () => loadUsage(ui.usage).catch(showError));
$("schedules-refresh").addEventListener("click",
  () => loadSchedules($("schedules"), { report: showError }).catch(showError));

const dataPanel = new DataPanel({
  picker: $("dataset-picker"), info: $("dataset-info"), suggestions: $("suggestions"),
  schema: $("schema"), uploadForm: $("upload-form"), name: $("upload-name"),
  files: $("upload-files"), uploadButton: $("upload-submit"), status: $("upload-status"),
  warnings: $("dataset-warnings"), failed: $("dataset-failed"),
}, {
  ask: (question) => {
    if (state.job) return;
    ui.question.value = question;
    ui.askForm.requestSubmit();
  },
  report: showError,
});
$("datasets-refresh").addEventListener("click", () => dataPanel.load().catch(showError));
// Admins only: the API answers 403 to others, shown in the banner when they open it.
new ReviewPanel($("review"), $("review-refresh"), () => dataPanel.selectedId());

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
initSignIn(showError);
refreshSidebar();
dataPanel.load().catch(sidebarError);
