// HTTP access to the Sunrise API: the stored key, problem+json errors, and
// following a job to its end (SSE first, long-polling as the fallback).

const KEY_STORAGE = "sunrise.apiKey";
export const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);
const PROGRESS_EVENTS = ["queued", "started", "llm_call", "thinking", "tool_call", "answer_delta"];

export function getKey() {
  return localStorage.getItem(KEY_STORAGE) || "";
}

// Bumped by every setKey: an error answered to a request sent before the key changed
// says nothing about the key now stored (see sentWithOtherKey).
let keyGeneration = 0;

export function setKey(key) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
  keyGeneration += 1;
}

/** Whether `err` answered a request sent with another key than the one stored now (a
 * load started before the key was saved, whose 401 must not reject the new key). */
export function sentWithOtherKey(err) {
  return err instanceof ApiError && err.keyGeneration !== keyGeneration;
}

/**
 * Headers that authenticate a request: the stored key, else (a console session's
 * cookie goes by itself) the session's CSRF token on a change, which the API requires.
 */
export function authHeaders(method = "GET") {
  const key = getKey();
  if (key) return { Authorization: `Bearer ${key}` };
  if (method === "GET" || method === "HEAD") return {};
  const csrf = document.cookie.match(/(?:^|;\s*)sunrise_csrf=([^;]*)/);
  return csrf ? { "X-CSRF-Token": decodeURIComponent(csrf[1]) } : {};
}

/** An HTTP error (status > 0) or a network failure (status 0). */
export class ApiError extends Error {
  constructor(status, title, detail, retryAfter = null) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.retryAfter = retryAfter;
    this.keyGeneration = keyGeneration;
  }
}

/** Call the API with the stored key; resolve to parsed JSON (or null on 204). */
export async function api(path, { method = "GET", body, headers = {} } = {}) {
  const sentWith = keyGeneration;
  const init = { method, headers: { Accept: "application/json", ...authHeaders(method), ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "Network error", `cannot reach the API (${err.message})`);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const retryAfter = response.headers.get("Retry-After");
    const title = (data && data.title) || response.statusText || "Request failed";
    const detail = (data && data.detail) || "";
    const error = new ApiError(response.status, title, detail, retryAfter);
    error.keyGeneration = sentWith;
    throw error;
  }
  return data;
}

function eventsUrl(jobId) {
  const url = `/v1/jobs/${encodeURIComponent(jobId)}/events`;
  const key = getKey();
  return key ? `${url}?access_token=${encodeURIComponent(key)}` : url;
}

export function reportUrl(batchId, format = "html") {
  const key = getKey();
  const base = `/v1/batches/${encodeURIComponent(batchId)}/report?format=${format}`;
  return key ? `${base}&access_token=${encodeURIComponent(key)}` : base;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follow a job until it ends. `onEvent(type, data)` gets every progress event;
 * `onMode(mode)` is told "sse" or "poll". Resolves to the final job JSON.
 * `handle.stop()` stops watching (the job itself keeps running).
 */
export function watchJob(jobId, { onEvent, onMode }) {
  let stopped = false;
  let source = null;
  const handle = {
    stop() {
      stopped = true;
      if (source) source.close();
    },
  };

  async function longPoll() {
    onMode("poll");
    let failures = 0;
    while (!stopped) {
      try {
        const job = await api(`/v1/jobs/${encodeURIComponent(jobId)}?wait=25`);
        failures = 0;
        if (job && TERMINAL.has(job.status)) return job;
        if (job) onEvent("status", job);
      } catch (err) {
        // Auth and not-found errors will not fix themselves; network blips might.
        if (err.status !== 0 && err.status < 500 && err.status !== 429) throw err;
        failures += 1;
        if (failures > 5) throw err;
        const waitS = Number(err.retryAfter) || Math.min(2 ** failures, 15);
        await sleep(waitS * 1000);
      }
    }
    return null;
  }

  function viaSse() {
    return new Promise((resolve, reject) => {
      if (typeof EventSource === "undefined") {
        resolve(null);
        return;
      }
      source = new EventSource(eventsUrl(jobId));
      const seen = new Set();
      let errorsInARow = 0;
      const parse = (ev) => {
        errorsInARow = 0;
        onMode("sse");
        if (ev.lastEventId) {
          if (seen.has(ev.lastEventId)) return null;
          seen.add(ev.lastEventId);
        }
        try {
          return JSON.parse(ev.data);
        } catch {
          return null;
        }
      };
      for (const type of PROGRESS_EVENTS) {
        source.addEventListener(type, (ev) => {
          const data = parse(ev);
          if (data) onEvent(type, data);
        });
      }
      for (const type of TERMINAL) {
        source.addEventListener(type, (ev) => {
          const data = parse(ev);
          source.close();
          resolve(data && data.status ? data : { job_id: jobId, status: type, incomplete: true });
        });
      }
      source.onerror = () => {
        errorsInARow += 1;
        // CLOSED means the server refused the stream (e.g. 401, 404, not SSE);
        // repeated CONNECTING errors mean the connection keeps dropping.
        if (source.readyState === EventSource.CLOSED || errorsInARow >= 3) {
          source.close();
          resolve(null);
        }
      };
      if (stopped) source.close();
    });
  }

  handle.done = (async () => {
    let job = await viaSse();
    if (stopped) return null;
    if (!job) return longPoll();
    if (job.incomplete || (job.status === "succeeded" && !job.result)) {
      // The terminal event should carry the whole job; fetch it if it did not.
      job = await api(`/v1/jobs/${encodeURIComponent(jobId)}`);
    }
    return job;
  })();
  return handle;
}
