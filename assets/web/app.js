// The page: one WebSocket to the server, the session list, and one session's screen with buttons
// for what the prefix keys do. Everything the page shows comes over the socket.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const app = { ws: null, sessions: [], current: null, watch: true, screen: null, pane: null, notes: 0, lists: 0 };
  window.PS.app = app;
  app.send = (msg) => send(msg);
  const NEW = "new session";

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

  function showList() {
    PS.changes.hide();
    app.current = null;
    $("list-view").classList.remove("hidden");
    $("session-view").classList.add("hidden");
    $("back").classList.add("hidden");
    $("title").textContent = "pokeshell";
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
    updateActions();
  }

  function open(name, watch) {
    app.watch = watch;
    showSession(name);
    app.current = name;
    const size = app.screen.ownSize();
    send({ type: "open", session: name.split(":")[0], cols: size.cols, rows: size.rows, watch });
    $("fit").textContent = watch ? "Fit to screen" : "Only watch";
  }

  function updateActions() {
    const s = app.sessions.find((x) => x.name === app.current);
    $("resume").classList.toggle("hidden", !(s && s.attention === "limit"));
  }

  function onText(msg) {
    switch (msg.type) {
      case "sessions":
        app.sessions = msg.sessions;
        app.listedAt = Date.now();
        app.lists += 1;
        PS.renderList(msg.sessions, (n) => open(n, true), confirmKill);
        updateActions();
        PS.changes.onSessions(msg.sessions);
        break;
      case "changes":
      case "changes_error":
      case "reviewed":
        PS.changes.onMessage(msg);
        break;
      case "attached":
        if (app.current === NEW) { $("new-name").value = ""; $("new-worktree").value = ""; }
        app.current = msg.name;
        $("title").textContent = msg.name;
        break;
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
    }
  }

  function connect() {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
    ws.binaryType = "arraybuffer";
    app.ws = ws;
    ws.onopen = () => {
      $("conn").textContent = "live";
      if (app.current) open(app.current, app.watch);
    };
    ws.onmessage = (ev) => {
      if (typeof ev.data === "string") {
        try { onText(JSON.parse(ev.data)); } catch (e) { toast("a message from pokeshell could not be read", true); }
      } else if (app.screen && app.current) {
        app.screen.write(new Uint8Array(ev.data));
      }
    };
    ws.onclose = (ev) => {
      $("conn").textContent = "disconnected" + (ev.reason ? ": " + ev.reason : "") + "; retrying…";
      setTimeout(connect, 2000);
    };
  }

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
  $("resume").addEventListener("click", () => send({ type: "poke" }));
  $("sup-on").addEventListener("click", () => send({ type: "supervision", on: true }));
  $("sup-off").addEventListener("click", () => send({ type: "supervision", on: false }));
  $("fit").addEventListener("click", () => open(app.current, !app.watch));
  $("changes").addEventListener("click", () => PS.changes.open(app.current, "session"));
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
    const p = await Notification.requestPermission();
    toast(p === "granted" ? "notifications on while this page is open" : "notifications refused; they show here instead");
    showPermission();
  });
  // The button says when notifications are already on.
  function showPermission() {
    const on = "Notification" in window && Notification.permission === "granted";
    $("notify").textContent = on ? "Notifying" : "Notify me";
  }
  showPermission();

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
})();
