// Console sign-in: with OpenID Connect configured and no API key stored, the console
// offers "Sign in". A signed-in person's browser holds an HttpOnly session cookie that
// scripts never read; the console sends no key and echoes the CSRF cookie on changes
// (api.js). Sign-out ends the session on the server (POST /v1/sign-out).

import { api, getKey } from "./api.js";

const $ = (id) => document.getElementById(id);

/** Show who is signed in (a console session: OpenID Connect or a sign-in link) with
 *  "Sign out", or "Sign in" when the server offers OpenID Connect; resolve to the
 *  signed-in user (or null). With a key stored, nothing changes. */
export async function initSignIn(report) {
  const ui = { account: $("account"), signIn: $("sign-in"), who: $("signed-in-as"),
               signOut: $("sign-out"), keyForm: $("key-form") };
  if (getKey()) return null;
  let me = null;
  try {
    me = await api("/v1/me");
  } catch (err) {
    if (err.status !== 401) report(err);
  }
  let config = null;
  if (!(me && me.user)) {
    try {
      config = await api("/auth/config");
    } catch {
      config = null; // an older server: no sign-in to offer
    }
    if (!config || !config.oidc) return null;
  }
  ui.account.hidden = false;
  if (me && me.user) {
    ui.who.textContent = `Signed in as ${me.user.email || me.user.external_id} (${me.role})`;
    ui.signIn.hidden = true;
    ui.signOut.hidden = false;
    ui.keyForm.hidden = true;
    ui.signOut.addEventListener("click", async () => {
      try {
        await api("/v1/sign-out", { method: "POST" });
      } catch (err) {
        report(err);
        return;
      }
      window.location.reload();
    });
    return me.user;
  }
  const here = window.location.pathname + window.location.search;
  ui.signIn.href = `${config.sign_in_url}?return_to=${encodeURIComponent(here)}`;
  ui.signIn.hidden = false;
  ui.signOut.hidden = true;
  ui.who.textContent = "";
  return null;
}
