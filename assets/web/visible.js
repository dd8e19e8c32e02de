// Tells pokeshell whether this page is visible to its person (docs/away.md): while a page showing a
// session is visible, pushes about that session wait. Said when the socket opens and whenever the
// page is shown or hidden.
"use strict";

(function () {
  function tell() {
    const ws = window.PS && PS.app && PS.app.ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: "visible", visible: document.visibilityState === "visible" }));
    }
  }
  document.addEventListener("visibilitychange", tell);
  window.PS.tellVisible = tell;
})();
