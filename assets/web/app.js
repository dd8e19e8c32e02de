// The page: one WebSocket to the server, the session list, and one session's screen with buttons
// for what the prefix keys do. Everything the page shows comes over the socket.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const app = { ws: null, sessions: [], current: null, watch: true, screen: null, pane: null, notes: 0, lists: 0,
    view: "term", talk: new PS.Talk($("talk")), talkSeen: { epoch: 0, seq: 0 }, digests: {} };
  window.PS.app = app;
  PS.send = (msg) => send(msg);
  app.send = (msg) => send(msg);
  const NEW = "new session";
  // The login lives in this origin's own storage (docs/web.md): sent by the page on purpose, as a
  // subprotocol of its socket and as a bearer on its requests, never by the browser on its own.
  const KEY = "pokeshell.login";
  PS.login = () => localStorage.getItem(KEY);
  PS.protocols = () => ["pokeshell", "pokeshell.login." + (PS.login() || "none")];
  const authHeaders = () => ({ Authorization: "Bearer " + (PS.login() || "none") });
  const LOGGED_OUT = 4401;

  PS.toast = (text, error) => toast(text, error);
  function toast(text, error, bell) {
    const t = PS.el("div", "toast" + (error ? " error" : "") + (bell ? " bell" : ""), text);
    $("toasts").append(t);
    setTimeout(() => t.remove(), error ? 8000 : 5000);
  }

  function send(msg) {
    if (app.ws && app.ws.readyState === WebSocket.OPEN) app.ws.send(JSON.stringify(msg));
    else toast("not connected to pokeshell", true);
  }

  // The same events that ring the terminal's bell, for any session, told by the server: a note
  // inside the page, and a browser notification naming the session once they are allowed.
  function note(session, text) {
    app.notes += 1;
    toast(session + ": " + text, false, true);
    if ("Notification" in window && Notification.permission === "granted") {
      try { new Notification("pokeshell — " + session, { body: text, tag: "pokeshell-" + session }); } catch (e) { /* not allowed here */ }
    }
  }

  const num = (name) => String(name || "").split(":")[0];

  // Which tab a session opens on: the conversation on a phone, the terminal on a wider screen,
  // unless this browser chose (the choice is kept).
  function defaultView() {
    const kept = localStorage.getItem("pokeshell.view");
    if (kept === "talk" || kept === "term") return kept;
    return window.innerWidth <= 700 ? "talk" : "term";
  }

  function showView(view, keep) {
    app.view = view;
    if (keep) { try { localStorage.setItem("pokeshell.view", view); } catch (e) { /* private mode */ } }
    $("talk-view").classList.toggle("hidden", view !== "talk");
    $("term-view").classList.toggle("hidden", view !== "term");
    $("tab-talk").setAttribute("aria-selected", String(view === "talk"));
    $("tab-term").setAttribute("aria-selected", String(view === "term"));
    document.body.classList.toggle("talking", view === "talk");
    if (view === "term" && app.screen && app.pane) app.screen.fitPane(app.pane.cols, app.pane.rows);
    if (view === "talk") { scrollTalk(true); markSeen(); }
  }

  function scrollTalk(force) {
    const el = document.scrollingElement || document.documentElement;
    if (force || el.scrollHeight - el.scrollTop - el.clientHeight < 200) {
      requestAnimationFrame(() => { el.scrollTop = el.scrollHeight; });
    }
  }

  // What this browser has read of the session's conversation: all of it, once shown.
  function markSeen() {
    if (!app.current || app.view !== "talk" || document.visibilityState !== "visible") return;
    if (app.talk.epoch && app.talk.last) PS.seen.set(app.current, app.talk.epoch, app.talk.last);
  }

  // The conversation of the session shown, from the start the server keeps, and what happened
  // since this browser last read it.
  function askTalk() {
    if (!app.current || app.current === NEW) return;
    app.talkSeen = PS.seen.get(app.current);
    app.talk.reset(0);
    $("meanwhile").classList.add("hidden");
    send({ type: "talk", session: num(app.current), epoch: app.talkSeen.epoch, since: 0 });
    send({ type: "away", seen: [{ session: num(app.current), epoch: app.talkSeen.epoch, seq: app.talkSeen.seq }] });
  }

  function onSaid(msg) {
    if (!app.current || num(msg.session) !== num(app.current)) return;
    let seenSeq;
    if (msg.fresh) {
      app.talk.reset(msg.epoch);
      const s = app.talkSeen;
      if (s.seq > 0 && s.epoch === msg.epoch) seenSeq = s.seq;
    } else if (msg.epoch !== app.talk.epoch) {
      // A log that began after the page asked (the session's first words), or another one.
      if (app.talk.epoch === 0 && app.talk.last === 0) app.talk.epoch = msg.epoch;
      else { askTalk(); return; }
    }
    app.talk.add(msg.entries, seenSeq);
    $("talk-empty").classList.toggle("hidden", app.talk.last > 0);
    if (app.view === "talk") { scrollTalk(msg.fresh); markSeen(); }
  }

  // Each digest: on the list, a line under its session; on a session, the banner above it.
  function onMeanwhile(digests) {
    for (const d of digests) app.digests[num(d.session)] = d;
    if (app.current) {
      const d = app.digests[num(app.current)];
      const text = d && app.talkSeen.seq > 0 ? PS.meanwhileText(d) : "";
      const s = app.sessions.find((x) => num(x.name) === num(app.current));
      $("meanwhile").textContent = "While you were away: " + text + (s ? "; now " + s.state : "") + ".";
      $("meanwhile").classList.toggle("hidden", !text);
    } else {
      showDigests();
    }
  }

  function showDigests() {
    for (const li of document.querySelectorAll("#sessions li.session")) {
      const d = app.digests[num(li.dataset.name)];
      const line = li.querySelector(".meanwhile");
      if (!d || !line) continue;
      const text = PS.meanwhileText(d);
      const seen = PS.seen.get(li.dataset.name);
      line.textContent = text ? (seen.seq > 0 ? "since you last read it: " : "so far: ") + text : "";
      line.classList.toggle("hidden", !text);
    }
  }

  // The list asks what happened in each session since this browser last read it.
  function askDigests() {
    if (app.current || !app.sessions.length) return;
    const seen = app.sessions.map((s) => Object.assign({ session: num(s.name) }, PS.seen.get(s.name)));
    send({ type: "away", seen });
  }

  function showList() {
    PS.changes.hide();
    app.current = null;
    document.body.classList.remove("talking");
    $("list-view").classList.remove("hidden");
    $("session-view").classList.add("hidden");
    $("back").classList.add("hidden");
    $("title").textContent = "pokeshell";
    askDigests();
  }

  function showSession(name) {
    PS.changes.hide();
    $("list-view").classList.add("hidden");
    $("session-view").classList.remove("hidden");
    $("back").classList.remove("hidden");
    $("title").textContent = name;
    if (!app.screen) {
      app.screen = new PS.Screen($("term"), (d) => send({ type: "input", data: d }));
      window.addEventListener("resize", () => {
        if (!app.current) return;
        if (app.watch && app.pane) app.screen.fitPane(app.pane.cols, app.pane.rows);
        if (!app.watch) send(Object.assign({ type: "resize" }, app.screen.ownSize()));
      });
    }
    app.screen.reset();
    app.talk.reset(0);
    $("meanwhile").classList.add("hidden");
    $("talk-empty").classList.add("hidden");
    showView(app.view === "talk" || app.view === "term" ? app.view : defaultView());
    updateActions();
  }

  function open(name, watch) {
    const again = app.current === name;
    app.watch = watch;
    if (!again) app.view = defaultView();
    showSession(name);
    app.current = name;
    const size = app.screen.ownSize();
    send({ type: "open", session: num(name), cols: size.cols, rows: size.rows, watch });
    $("fit").textContent = watch ? "Fit to screen" : "Only watch";
    askTalk();
  }

  // A push's Open link names its session (/?session=N): opened once the list names it.
  let asked = new URLSearchParams(location.search).get("session");
  function openAsked() {
    if (!asked) return;
    const s = app.sessions.find((x) => num(x.name) === asked);
    asked = null;
    history.replaceState(null, "", location.pathname);
    if (s && app.current !== s.name) open(s.name, true);
  }

  function updateActions() {
    const s = app.sessions.find((x) => x.name === app.current);
    $("resume").classList.toggle("hidden", !(s && s.attention === "limit"));
    if (PS.guardActions) PS.guardActions(s, $("guard-actions"));
    $("talk-resume").classList.toggle("hidden", !(s && s.attention === "limit"));
  }

  function onText(msg) {
    switch (msg.type) {
      case "sessions":
        app.sessions = msg.sessions;
        if (app.lists === 0) openAsked(msg.sessions);
        app.listedAt = Date.now();
        app.lists += 1;
        PS.renderList(msg.sessions, (n) => open(n, true), confirmKill);
        showDigests();
        updateActions();
        askDigests();
        openAsked();
        PS.changes.onSessions(msg.sessions);
        break;
      case "changes":
      case "changes_error":
      case "reviewed":
        PS.changes.onMessage(msg);
        break;
      case "attached": {
        const wasNew = app.current === NEW;
        if (wasNew) { $("new-name").value = ""; $("new-worktree").value = ""; }
        app.current = msg.name;
        $("title").textContent = msg.name;
        if (wasNew) askTalk();
        break;
      }
      case "size":
        app.pane = { cols: msg.cols, rows: msg.rows };
        if (app.screen) app.screen.fitPane(msg.cols, msg.rows);
        break;
      case "exited":
        toast((app.current || "the session") + " ended (code " + msg.code + ")");
        showList();
        break;
      case "detached":
        showList();
        break;
      case "done":
        toast(msg.message);
        break;
      case "error":
        toast(msg.message, true);
        // A new session that could not start: back to the form, as it was filled.
        if (app.current === NEW) showList();
        break;
      case "note":
        note(msg.session, msg.text);
        break;
      case "said":
        onSaid(msg);
        break;
      case "meanwhile":
        onMeanwhile(msg.digests);
        break;
      case "push_key":
        PS.push.onKey(msg.key, toast);
        break;
      case "pushing":
        PS.push.on = msg.on;
        toast(msg.on ? "this device gets pokeshell's notifications, also while no page is open" : "no more notifications on this device");
        showPermission();
        break;
    }
  }

  // No login, or it ended: nothing shows but how to log in.
  function loggedOut(status, text) {
    localStorage.removeItem(KEY);
    const ws = app.ws;
    app.ws = null;
    if (ws) { ws.onclose = null; ws.close(); }
    app.current = null;
    $("conn").textContent = status;
    for (const id of ["list-view", "session-view", "back", "logout", "logout-all", "notify"]) $(id).classList.add("hidden");
    $("logged-out-text").textContent = text;
    $("logged-out").classList.remove("hidden");
  }
  const LOG_IN_AGAIN = "Logged out. To log in again, run `pokeshell web` in a terminal and open the link it prints.";

  function connect() {
    if (!PS.login()) {
      loggedOut("log in first", "pokeshell: log in first: run `pokeshell web` in a terminal and open the link it prints.");
      return;
    }
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws", PS.protocols());
    ws.binaryType = "arraybuffer";
    app.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      $("conn").textContent = "live";
      if (PS.tellVisible) PS.tellVisible();
      if (app.current && app.current !== NEW) open(app.current, app.watch);
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") {
        try { onText(JSON.parse(ev.data)); } catch (e) { toast("a message from pokeshell could not be read", true); }
      } else if (app.screen && app.current) {
        app.screen.write(new Uint8Array(ev.data));
      }
    };
    ws.onclose = (ev) => {
      if (app.ws !== ws) return;
      if (ev.code === LOGGED_OUT) { loggedOut("logged out", LOG_IN_AGAIN); return; }
      $("conn").textContent = "disconnected" + (ev.reason ? ": " + ev.reason : "") + "; retrying…";
      const again = () => setTimeout(connect, 2000);
      // A socket refused before it opened may have been refused for its login: ask.
      if (opened) { again(); return; }
      fetch("/auth", { headers: authHeaders(), cache: "no-store" })
        .then((res) => { if (res.status === 401) loggedOut("logged out", LOG_IN_AGAIN); else again(); })
        .catch(again);
    };
  }

  $("logout").addEventListener("click", () => {
    fetch("/logout", { method: "POST", headers: authHeaders() })
      .catch(() => {})
      .finally(() => loggedOut("logged out", LOG_IN_AGAIN));
  });
  $("logout-all").addEventListener("click", () => {
    fetch("/logout-all", { method: "POST", headers: authHeaders() })
      .then((res) => res.json())
      .then((body) => loggedOut("logged out", "Every login ended (" + body.ended + "), with every one-tap link from a push (" + body.links + ") and every device's push subscription (" + body.subscriptions + "). " + LOG_IN_AGAIN.slice("Logged out. ".length)))
      .catch(() => loggedOut("logged out", LOG_IN_AGAIN));
  });

  let killing = null;
  function confirmKill(name) {
    killing = name;
    if (app.current) {
      $("kill-text").textContent = "End " + name + "'s pi?";
      $("kill-confirm").classList.remove("hidden");
    } else if (window.confirm("End " + name + "'s pi?")) {
      send({ type: "kill", session: name.split(":")[0] });
    }
  }

  $("back").addEventListener("click", () => { send({ type: "close" }); showList(); });
  $("poke").addEventListener("click", () => send({ type: "poke" }));
  $("talk-poke").addEventListener("click", () => send({ type: "poke" }));
  $("talk-resume").addEventListener("click", () => send({ type: "poke" }));
  $("talk-esc").addEventListener("click", () => send({ type: "input", data: PS.KEYS.esc }));
  $("tab-talk").addEventListener("click", () => showView("talk", true));
  $("tab-term").addEventListener("click", () => showView("term", true));
  // An answer goes to pi's editor as one paste (lines stay lines), then Enter submits it.
  function answer() {
    const text = $("answer").value;
    if (!text.trim()) return;
    send({ type: "input", data: "\x1b[200~" + text + "\x1b[201~" });
    setTimeout(() => send({ type: "input", data: "\r" }), 30);
    $("answer").value = "";
  }
  $("answer-form").addEventListener("submit", (ev) => { ev.preventDefault(); answer(); });
  $("answer").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); answer(); }
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState !== "visible") return;
    if (app.current) markSeen(); else askDigests();
  });
  $("resume").addEventListener("click", () => send({ type: "poke" }));
  $("sup-on").addEventListener("click", () => send({ type: "supervision", on: true }));
  $("sup-off").addEventListener("click", () => send({ type: "supervision", on: false }));
  $("fit").addEventListener("click", () => open(app.current, !app.watch));
  $("changes").addEventListener("click", () => PS.changes.open(app.current, "session"));
  $("talk-changes").addEventListener("click", () => PS.changes.open(app.current, "session"));
  $("handoff").addEventListener("click", () => { $("handoff-form").classList.remove("hidden"); $("handoff-focus").focus(); });
  $("handoff-cancel").addEventListener("click", () => $("handoff-form").classList.add("hidden"));
  $("handoff-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const focus = $("handoff-focus").value.trim();
    send({ type: "handoff", focus: focus || null });
    $("handoff-focus").value = "";
    $("handoff-form").classList.add("hidden");
  });
  $("kill").addEventListener("click", () => confirmKill(app.current));
  $("kill-no").addEventListener("click", () => $("kill-confirm").classList.add("hidden"));
  $("kill-yes").addEventListener("click", () => {
    $("kill-confirm").classList.add("hidden");
    if (killing) send({ type: "kill", session: killing.split(":")[0] });
  });
  for (const b of document.querySelectorAll("[data-key]")) {
    b.addEventListener("click", () => send({ type: "input", data: PS.KEYS[b.dataset.key] }));
  }
  $("type-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = $("type-text").value;
    send({ type: "input", data: text });
    // The Enter apart, as a key of its own: pi takes a pasted newline as a newline in its editor.
    setTimeout(() => send({ type: "input", data: "\r" }), 30);
    $("type-text").value = "";
  });
  $("new-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    showSession(NEW);
    app.current = NEW;
    app.watch = false;
    const size = app.screen.ownSize();
    send({ type: "new", dir: $("new-dir").value, name: $("new-name").value, worktree: $("new-worktree").value,
      cols: size.cols, rows: size.rows });
  });
  $("notify").addEventListener("click", async () => {
    if (!("Notification" in window)) { toast("this browser has no notifications; they show here instead", true); return; }
    if (PS.push.on && window.confirm("Stop pokeshell's notifications on this device?")) { PS.push.stop(); return; }
    const p = await Notification.requestPermission();
    toast(p === "granted" ? "notifications on while this page is open" : "notifications refused; they show here instead");
    showPermission();
    if (p === "granted") PS.push.ask();
  });
  // The button says when notifications are already on; its title, whether pushes reach this device.
  function showPermission() {
    const on = "Notification" in window && Notification.permission === "granted";
    $("notify").textContent = on ? "Notifying" : "Notify me";
    $("notify").title = PS.push.on ? "This device gets notifications, also while no page is open (tap to stop)"
      : on ? "Notifications while a page is open" : "Show a notification when an agent needs you";
  }
  showPermission();

  // A link from a notification names its session (?session=3:api or ?session=api): opened once the
  // list is here.
  function openAsked(sessions) {
    const asked = new URLSearchParams(location.search).get("session");
    if (!asked) return;
    history.replaceState(null, "", "/");
    // By its label (3:api), its number, or its name alone (what a note names).
    const bare = (name) => String(name || "").split(":").slice(1).join(":");
    const s = sessions.find((x) => x.name === asked || num(x.name) === num(asked) || bare(x.name) === asked);
    if (s) open(s.name, true);
    else toast("no session " + asked + " any more", true);
  }

  // For tests and the measuring script: the screen's text, row by row.
  PS.screenText = function () {
    if (!app.screen) return "";
    const b = app.screen.term.buffer.active;
    const lines = [];
    for (let i = 0; i < b.length; i++) lines.push(b.getLine(i).translateToString(true));
    return lines.join("\n");
  };

  // The list comes only when it changes: its clocks (age, the running tool's time) count on here.
  setInterval(() => { if (!app.current && app.listedAt) PS.tickList(Math.floor((Date.now() - app.listedAt) / 1000)); }, 1000);

  connect();
  PS.push.start(send);
})();
