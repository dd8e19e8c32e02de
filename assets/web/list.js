// The session list: the ones needing the user first, each with its state, tool and timer, last
// intervention, context use. Drawn again whenever the server's list changes.
"use strict";
window.PS = window.PS || {};

PS.ORDER = ["paused", "question", "gave_up", "limit", "stalled", "working", "idle", "exited"];
PS.NEEDS = new Set(["paused", "question", "gave_up", "limit", "stalled"]);

PS.rank = function (s) {
  const i = PS.ORDER.indexOf(s.attention || "");
  return i < 0 ? PS.ORDER.length : i;
};

PS.age = function (secs) {
  if (secs < 60) return secs + "s";
  if (secs < 3600) return Math.floor(secs / 60) + "m";
  if (secs < 86400) return Math.floor(secs / 3600) + "h" + String(Math.floor((secs % 3600) / 60)).padStart(2, "0") + "m";
  return Math.floor(secs / 86400) + "d";
};

PS.el = function (tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

PS.renderList = function (sessions, onOpen, onKill) {
  const ul = document.getElementById("sessions");
  ul.replaceChildren();
  const sorted = sessions.slice().sort((a, b) => PS.rank(a) - PS.rank(b) || a.name.localeCompare(b.name, undefined, { numeric: true }));
  for (const s of sorted) {
    const li = PS.el("li", "session");
    li.dataset.name = s.name;
    if (PS.NEEDS.has(s.attention)) li.classList.add("needs");
    if (s.attention === "exited") li.classList.add("exited");
    const top = PS.el("div", "top");
    top.append(PS.el("span", "name", s.name), PS.el("span", "state", s.state));
    const facts = PS.el("div", "facts");
    if (s.tool) {
      const tool = PS.el("span", "tool", "⚙ " + s.tool);
      if (typeof s.tool_secs === "number") {
        tool.dataset.name = s.tool.replace(/ \d+s$/, "");
        tool.dataset.secs = s.tool_secs;
      }
      facts.append(tool);
    }
    if (s.last_intervention) facts.append(PS.el("span", "intervention", "last: " + s.last_intervention));
    if (typeof s.context_percent === "number") facts.append(PS.el("span", "context", "context " + Math.round(s.context_percent) + "%"));
    const age = PS.el("span", "age", "age " + PS.age(s.age_secs));
    age.dataset.secs = s.age_secs;
    facts.append(age);
    if (s.attached > 0) facts.append(PS.el("span", "attached", s.attached + " attached"));
    facts.append(PS.el("span", "dir", s.dir));
    const row = PS.el("div", "row");
    const open = PS.el("button", "open", "Open");
    open.addEventListener("click", () => onOpen(s.name));
    const kill = PS.el("button", "danger kill", "Kill…");
    kill.addEventListener("click", () => onKill(s.name));
    row.append(open, kill);
    if (PS.guardButtons) PS.guardButtons(s, row);
    // What happened since this browser last read the session (filled in by the page's digests).
    const meanwhile = PS.el("div", "meanwhile hidden");
    li.append(top, facts, meanwhile, row);
    ul.append(li);
  }
  document.getElementById("empty").classList.toggle("hidden", sessions.length > 0);
};

// The list's clocks, `elapsed` seconds after the server sent it.
PS.tickList = function (elapsed) {
  for (const e of document.querySelectorAll("#sessions .age")) e.textContent = "age " + PS.age(Number(e.dataset.secs) + elapsed);
  for (const e of document.querySelectorAll("#sessions .tool[data-secs]")) e.textContent = "⚙ " + e.dataset.name + " " + (Number(e.dataset.secs) + elapsed) + "s";
};
