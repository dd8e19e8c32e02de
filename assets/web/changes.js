// The Changes view: what a session's agent changed since the session started (the same diff as
// `pokeshell diff` and the terminal's prefix+r), read again whenever the server's list says the
// session's files changed. Tap a line to comment on it; "Send review" sends every comment as one
// message to the agent. Comments are kept in this tab's sessionStorage until the server says the
// review went out (pi has it), so a reload, a lost connection or a review that could not be sent
// loses none.
"use strict";
window.PS = window.PS || {};

(function () {
  const $ = (id) => document.getElementById(id);
  const cv = { session: null, from: null, model: null, error: null, mark: undefined, editing: null, stale: false,
    askedAt: 0, timer: null, sending: false, reads: 0 };
  PS.changes = cv;
  // At most one reading every this many ms while the agent keeps changing files.
  const EVERY = 1500;

  const key = () => "pokeshell-review:" + cv.session;
  function comments() {
    try { return JSON.parse(sessionStorage.getItem(key()) || "[]"); } catch (e) { return []; }
  }
  function keep(list) {
    if (list.length) sessionStorage.setItem(key(), JSON.stringify(list));
    else sessionStorage.removeItem(key());
  }
  const same = (c, file, side, line) => c.file === file && c.side === side && c.line === line;

  function view() {
    let v = $("changes-view");
    if (v.dataset.built) return v;
    v.dataset.built = "1";
    const head = PS.el("div", "row cv-head");
    const screen = PS.el("button", "", "◂ Screen");
    screen.id = "cv-screen";
    screen.title = "Back to the session's screen";
    screen.addEventListener("click", () => {
      const name = cv.session;
      cv.hide();
      $("session-view").classList.remove("hidden");
      $("title").textContent = name;
    });
    const refresh = PS.el("button", "", "Refresh");
    refresh.id = "cv-refresh";
    refresh.addEventListener("click", () => ask(true));
    const summary = PS.el("span", "dim");
    summary.id = "cv-summary";
    head.append(screen, refresh, summary);
    const note = PS.el("p", "cv-note hidden");
    note.id = "cv-note";
    const orphans = PS.el("div", "cv-orphans");
    orphans.id = "cv-orphans";
    const files = PS.el("div", "");
    files.id = "cv-files";
    const bar = PS.el("div", "cv-bar");
    const count = PS.el("span", "", "");
    count.id = "cv-count";
    const send = PS.el("button", "", "Send review");
    send.id = "review-send";
    send.addEventListener("click", sendReview);
    bar.append(count, send);
    v.append(head, note, orphans, files, bar);
    return v;
  }

  cv.open = function (session, from) {
    const v = view();
    cv.session = session;
    cv.from = from;
    cv.model = null;
    cv.error = null;
    cv.editing = null;
    cv.mark = (PS.app.sessions.find((s) => s.name === session) || {}).changes;
    $("list-view").classList.add("hidden");
    $("session-view").classList.add("hidden");
    $("back").classList.remove("hidden");
    $("title").textContent = session;
    $("cv-screen").classList.toggle("hidden", from !== "session");
    v.classList.remove("hidden");
    render();
    ask(true);
  };

  // Leaves the view (the page's own navigation shows what comes next).
  cv.hide = function () {
    $("changes-view").classList.add("hidden");
    cv.session = null;
    clearTimeout(cv.timer);
  };

  function ask(now) {
    if (!cv.session) return;
    clearTimeout(cv.timer);
    const wait = now ? 0 : Math.max(0, cv.askedAt + EVERY - Date.now());
    cv.timer = setTimeout(() => {
      cv.askedAt = Date.now();
      PS.app.send({ type: "changes", session: cv.session });
    }, wait);
  }

  // The server's list came: the session's files changed when its mark did.
  cv.onSessions = function (sessions) {
    if (!cv.session) return;
    const s = sessions.find((x) => x.name === cv.session);
    if (!s) return;
    if (s.changes !== cv.mark) {
      cv.mark = s.changes;
      ask(false);
    }
  };

  cv.onMessage = function (msg) {
    if (msg.type === "reviewed") return reviewed(msg);
    if (msg.session !== cv.session) return;
    cv.reads += 1;
    if (msg.type === "changes") {
      cv.model = msg.changes;
      cv.error = null;
    } else {
      cv.error = msg.message;
    }
    // A comment being written is not pulled from under the writer: the new diff shows after it.
    if (cv.editing) cv.stale = true;
    else render();
  };

  // The server answers once the session's supervisor sent the review to pi, or could not (pi's
  // bridge did not come within its wait): only comments that went are forgotten, and only those
  // sent (one written or changed while the review waited stays).
  function reviewed(msg) {
    cv.sending = false;
    $("review-send").disabled = false;
    PS.toast(msg.message, !msg.ok);
    const sent = cv.sent && cv.sent.session === msg.session ? new Set(cv.sent.items) : null;
    cv.sent = null;
    if (msg.ok) {
      const k = "pokeshell-review:" + msg.session;
      let left = [];
      try { left = JSON.parse(sessionStorage.getItem(k) || "[]"); } catch (e) { left = []; }
      left = sent ? left.filter((c) => !sent.has(JSON.stringify(c))) : [];
      if (left.length) sessionStorage.setItem(k, JSON.stringify(left));
      else sessionStorage.removeItem(k);
      if (msg.session !== cv.session) return;
      if (cv.editing) cv.stale = true;
      else render();
    }
  }

  function sendReview() {
    const list = comments();
    if (!list.length) { PS.toast("no comments yet: tap a line to write one", true); return; }
    if (cv.sending) return;
    cv.sending = true;
    cv.sent = { session: cv.session, items: list.map((c) => JSON.stringify(c)) };
    $("review-send").disabled = true;
    PS.app.send({ type: "review", session: cv.session, comments: list });
  }

  function letter(status) {
    return { added: "A", modified: "M", deleted: "D", renamed: "R", copied: "C", type_changed: "T", unmerged: "U" }[status] || "?";
  }
  function counts(f) {
    return f.added === null || f.added === undefined ? "binary" : "+" + f.added + " −" + f.removed;
  }

  function render() {
    if (!cv.session) return;
    cv.stale = false;
    cv.editing = null;
    const list = comments();
    $("cv-count").textContent = list.length === 0 ? "Tap a line to comment on it" : list.length === 1 ? "1 comment" : list.length + " comments";
    $("review-send").disabled = cv.sending || list.length === 0;
    const files = $("cv-files");
    files.replaceChildren();
    const note = $("cv-note");
    note.classList.add("hidden");
    const summary = $("cv-summary");
    const shown = new Set();
    if (cv.error) {
      summary.textContent = "";
      note.textContent = cv.error;
      note.classList.remove("hidden");
    } else if (!cv.model) {
      summary.textContent = "reading the changes…";
    } else {
      const m = cv.model;
      let a = 0, r = 0;
      for (const f of m.files) { a += f.added || 0; r += f.removed || 0; }
      summary.textContent = "Changes: " + (m.files.length === 0 ? "none since " + m.base.slice(0, 10)
        : m.files.length + (m.files.length === 1 ? " file" : " files") + ", +" + a + " −" + r + " since " + m.base.slice(0, 10));
      if (m.note) { note.textContent = "Cut: " + m.note; note.classList.remove("hidden"); }
      for (const f of m.files) files.append(fileBox(f, list, shown));
    }
    orphans(list, shown);
  }

  function fileBox(f, list, shown) {
    const box = PS.el("section", "cfile");
    box.dataset.path = f.path;
    const head = PS.el("div", "cfile-head");
    head.append(PS.el("span", "cbadge c-" + f.status, letter(f.status)),
      PS.el("span", "cpath", f.from ? f.from + " → " + f.path : f.path), PS.el("span", "ccounts", counts(f)));
    head.addEventListener("click", () => box.classList.toggle("folded"));
    const body = PS.el("div", "cfile-body");
    for (const h of f.hunks) {
      body.append(PS.el("div", "chunk", h.header));
      for (const l of h.lines) {
        const side = l.kind === "removed" ? "old" : "new";
        const num = side === "old" ? l.old : l.new;
        const row = PS.el("div", "cline c-" + l.kind);
        const sign = { added: "+", removed: "−", context: " ", no_newline: "\\" }[l.kind];
        row.append(PS.el("span", "cnum", num === undefined || num === null ? "" : String(num)), PS.el("span", "ctext", sign + l.text));
        body.append(row);
        if (l.kind === "no_newline") continue;
        row.dataset.side = side;
        row.dataset.line = num;
        row.addEventListener("click", () => edit(body, row, f.path, side, num, l.text));
        for (const c of list.filter((c) => same(c, f.path, side, num))) {
          shown.add(c);
          body.append(commentBox(c, () => edit(body, row, f.path, side, num, l.text)));
        }
      }
    }
    if (f.note) body.append(PS.el("div", "cfile-note", f.note));
    box.append(head, body);
    return box;
  }

  function commentBox(c, onEdit) {
    const b = PS.el("div", "ccomment", c.comment);
    b.title = "Tap to change or remove";
    b.addEventListener("click", onEdit);
    return b;
  }

  // Comments on lines the diff no longer shows: still part of the review, listed apart.
  function orphans(list, shown) {
    const box = $("cv-orphans");
    box.replaceChildren();
    const lost = cv.model ? list.filter((c) => !shown.has(c)) : [];
    if (!lost.length) return;
    box.append(PS.el("div", "dim", "Comments on lines no longer in the diff (they are sent too):"));
    for (const c of lost) {
      const row = PS.el("div", "ccomment", c.file + ":" + c.line + " — " + c.comment);
      const rm = PS.el("button", "", "Remove");
      rm.addEventListener("click", () => { keep(comments().filter((x) => !same(x, c.file, c.side, c.line))); render(); });
      row.append(" ", rm);
      box.append(row);
    }
  }

  // The editor under a line: write, change or remove that line's comment.
  function edit(body, row, file, side, line, text) {
    if (cv.editing) cv.editing.remove();
    const old = comments().find((c) => same(c, file, side, line));
    const ed = PS.el("div", "ceditor");
    const area = PS.el("textarea", "");
    area.rows = 3;
    area.placeholder = "Your comment on " + file + " line " + line;
    area.value = old ? old.comment : "";
    const save = PS.el("button", "", old ? "Save" : "Add comment");
    const cancel = PS.el("button", "", "Cancel");
    const done = () => { ed.remove(); cv.editing = null; render(); };
    save.addEventListener("click", () => {
      const words = area.value.trim();
      if (!words) { area.focus(); return; }
      const list = comments().filter((c) => !same(c, file, side, line));
      list.push({ file, line, side, text, comment: words });
      keep(list);
      done();
    });
    cancel.addEventListener("click", done);
    const row2 = PS.el("div", "row");
    row2.append(save, cancel);
    if (old) {
      const rm = PS.el("button", "danger", "Remove");
      rm.addEventListener("click", () => { keep(comments().filter((c) => !same(c, file, side, line))); done(); });
      row2.append(rm);
    }
    ed.append(area, row2);
    row.after(ed);
    cv.editing = ed;
    area.focus();
  }
})();
