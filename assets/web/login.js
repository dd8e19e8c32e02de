// The login page: the one-time token from the link (after '#', or from an older link's query) is
// taken off the address at once, exchanged for a credential, and the credential kept in this
// origin's own storage, which the browser sends nowhere by itself (docs/web.md, "Security model").
"use strict";

(function () {
  const KEY = "pokeshell.login";
  const text = document.getElementById("login-text");
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  const token = fromHash || new URLSearchParams(location.search).get("token") || "";
  history.replaceState(null, "", "/login");
  if (!token) {
    text.textContent = "pokeshell: this address needs the login link `pokeshell web` prints.";
    return;
  }
  fetch("/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }),
    cache: "no-store",
  })
    .then(async (res) => {
      const body = await res.json().catch(() => ({}));
      if (res.ok && body.credential) {
        localStorage.setItem(KEY, body.credential);
        location.replace("/");
      } else {
        document.getElementById("conn").textContent = "refused";
        text.textContent = body.error || "pokeshell: refused (" + res.status + ").";
      }
    })
    .catch(() => { text.textContent = "pokeshell: the web view did not answer; try the link again."; });
})();
