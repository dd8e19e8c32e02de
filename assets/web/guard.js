// A session a guard rail paused (its budget, the day's budget, the call cap, no progress): its state
// says why, and two buttons answer, as prefix+a and prefix+x do: allow the stated amount more and go
// on, or leave it stopped (docs/supervision.md, Guard rails).
"use strict";
window.PS = window.PS || {};

PS.guardAnswerButtons = function (s) {
  const session = s.name.split(":")[0];
  const allow = PS.el("button", "guard-allow", (s.offer || "allow more").replace(/^./, (c) => c.toUpperCase()));
  allow.title = "Let the agent go on (prefix+a)";
  allow.addEventListener("click", () => PS.send({ type: "allow", session }));
  const leave = PS.el("button", "guard-leave", "Leave it stopped");
  leave.title = "Answer without allowing more (prefix+x)";
  leave.addEventListener("click", () => PS.send({ type: "leave", session }));
  return [allow, leave];
};

// In the list: a paused session's row gets the two answers.
PS.guardButtons = function (s, row) {
  if (s.attention === "paused") row.append(...PS.guardAnswerButtons(s));
};

// On the session's screen: the answers above the terminal while it is paused.
PS.guardActions = function (s, box) {
  const paused = !!(s && s.attention === "paused");
  box.classList.toggle("hidden", !paused);
  if (!paused) {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(PS.el("span", "guard-state", "⛔ " + s.state), ...PS.guardAnswerButtons(s));
};
