// The error banner above the thread, and what an error means for the API key
// form: a 401 asks for a key, a 429 says when to retry.

import { getKey, sentWithOtherKey } from "./api.js";

const $ = (id) => document.getElementById(id);
const ui = {
  error: $("error"), errorText: $("error-text"),
  keyForm: $("key-form"), key: $("api-key"), keyState: $("key-state"),
};

export function showKeyState() {
  ui.keyState.textContent = getKey() ? "key saved" : "no key saved";
}

export function showError(err) {
  // A 401 to a request sent before the key changed (the page's first loads, made with
  // no key, answering after one was saved) is about a key no longer in use.
  if (err.status === 401 && sentWithOtherKey(err)) return;
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

export function clearError() {
  ui.error.hidden = true;
  ui.errorText.textContent = "";
}

$("error-dismiss").addEventListener("click", clearError);
