// The sidebar's list of conversations: paged ("Load more"), the open one marked,
// each item opening its conversation or deleting it with two clicks.

import { api } from "./api.js";
import { el } from "./render.js";

const when = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "");

export class ConversationList {
  /**
   * @param {HTMLElement} list the <ul> of conversations
   * @param {HTMLElement} more the "Load more" button
   * @param {{activeId: () => (string|null), open: (id: string) => void,
   *          deleted: (id: string) => void, report: (err: Error) => void}} hooks
   */
  constructor(list, more, hooks) {
    this.list = list;
    this.more = more;
    this.hooks = hooks;
    this.cursor = null;
    more.addEventListener("click", () => this.load(true).catch(hooks.report));
  }

  async load(append = false) {
    const query = append && this.cursor ? `?cursor=${encodeURIComponent(this.cursor)}` : "";
    const data = await api(`/v1/conversations${query}`);
    const items = (data.items || []).map((conv) => this.item(conv));
    if (append) this.list.append(...items);
    else this.list.replaceChildren(...items);
    if (!this.list.children.length) {
      this.list.append(el("li", { class: "muted empty" }, "No conversations yet."));
    }
    this.cursor = data.next_cursor || null;
    this.more.hidden = !this.cursor;
    this.markActive();
  }

  markActive() {
    const active = this.hooks.activeId();
    for (const li of this.list.children) {
      li.classList.toggle("active", li.dataset.conversationId === active);
    }
  }

  item(conv) {
    const id = conv.conversation_id;
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
        await api(`/v1/conversations/${encodeURIComponent(id)}`, { method: "DELETE" });
        li.remove();
        this.hooks.deleted(id);
      } catch (err) {
        this.hooks.report(err);
      }
    });
    const open = el("button", { type: "button", class: "conv-open", "data-testid": "open-conversation" },
      el("span", { class: "conv-title" }, conv.title || "Untitled"),
      el("span", { class: "conv-when" }, when(conv.updated_at || conv.created_at)));
    open.addEventListener("click", () => this.hooks.open(id));
    const li = el("li", {
      "data-testid": "conversation-item", "data-conversation-id": id,
      class: id === this.hooks.activeId() ? "active" : "",
    }, open, del);
    return li;
  }
}
