// The conversation view: a session's prompts, the agent's replies with their tool calls and what
// each tool answered, what pokeshell did on its own and where each run ended, as text a phone can
// read. The server sends the items ("said" messages); everything is drawn with textContent.
"use strict";
window.PS = window.PS || {};

PS.money = function (usd) {
  if (typeof usd !== "number") return "";
  return usd < 0.01 && usd > 0 ? "<$0.01" : "$" + usd.toFixed(2);
};

PS.clock = function (ms) {
  const d = new Date(ms);
  return String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
};

// What a page saw last of each session's conversation, kept in the browser: {number: {epoch, seq}}.
PS.seen = {
  all() {
    try { return JSON.parse(localStorage.getItem("pokeshell.seen") || "{}") || {}; } catch (e) { return {}; }
  },
  get(session) { return this.all()[String(session).split(":")[0]] || { epoch: 0, seq: 0 }; },
  set(session, epoch, seq) {
    const all = this.all();
    all[String(session).split(":")[0]] = { epoch, seq };
    try { localStorage.setItem("pokeshell.seen", JSON.stringify(all)); } catch (e) { /* private mode */ }
  },
};

// A digest in words: "2 runs ($0.04) · 1 intervention: resumed after …"; "" when nothing happened.
PS.meanwhileText = function (d) {
  const parts = [];
  const n = (k, one, many) => k + " " + (k === 1 ? one : many);
  if (d.runs) parts.push(n(d.runs, "run", "runs") + (typeof d.cost_usd === "number" ? " (" + PS.money(d.cost_usd) + ")" : ""));
  if (d.replies) parts.push(n(d.replies, "reply", "replies"));
  if (d.tool_calls) parts.push(n(d.tool_calls, "tool call", "tool calls") + (d.tool_errors ? ", " + d.tool_errors + " failed" : ""));
  if (d.interventions) parts.push(n(d.interventions, "intervention", "interventions") + ": " + d.quoted[d.quoted.length - 1]);
  if (d.prompts && !parts.length) parts.push(n(d.prompts, "prompt", "prompts"));
  return parts.length ? (d.partial ? "more than " : "") + parts.join(" · ") : "";
};

PS.Talk = class {
  constructor(list) {
    this.list = list;
    this.reset(0);
  }

  reset(epoch) {
    this.epoch = epoch;
    this.last = 0;
    this.calls = new Map();
    this.marked = false;
    this.list.replaceChildren();
  }

  // Items in order; those after `seenSeq` are marked new, the first of them under a divider.
  add(entries, seenSeq) {
    for (const e of entries) {
      if (e.seq <= this.last) continue;
      this.last = e.seq;
      const li = this.item(e);
      if (!li) continue;
      if (seenSeq !== undefined && e.seq > seenSeq) {
        li.classList.add("new");
        if (!this.marked && this.list.children.length) {
          this.list.append(PS.el("li", "divider", "new since you last looked"));
        }
        this.marked = true;
      }
      this.list.append(li);
    }
  }

  item(e) {
    switch (e.kind) {
      case "prompt": {
        const li = PS.el("li", "said prompt " + e.by);
        li.append(this.head(e.by === "you" ? "you" : "pokeshell", e.at_ms), PS.el("div", "text", e.text));
        return li;
      }
      case "reply": {
        const li = PS.el("li", "said reply");
        li.append(this.head("agent", e.at_ms));
        if (e.text) li.append(PS.el("div", "text", e.text));
        for (const t of e.tools) {
          const call = PS.el("div", "call");
          call.dataset.id = t.id;
          call.append(PS.el("span", "tool", t.name), PS.el("code", "args", t.call));
          this.calls.set(t.id, call);
          li.append(call);
        }
        return li;
      }
      case "result": {
        const call = this.calls.get(e.id);
        const mark = PS.el("span", "res " + (e.ok ? "ok" : "bad"), e.ok ? "✓" : "✗ failed");
        const glimpse = e.text ? PS.el("details", "glimpse") : null;
        if (glimpse) glimpse.append(PS.el("summary", "", "output"), PS.el("pre", "", e.text));
        if (call) {
          call.append(mark);
          if (glimpse) call.after(glimpse);
          return null;
        }
        const li = PS.el("li", "said result");
        li.append(PS.el("span", "tool", e.name), mark);
        if (glimpse) li.append(glimpse);
        return li;
      }
      case "intervention":
        return PS.el("li", "said intervention", "⚡ pokeshell " + e.text);
      case "run_end": {
        const words = { done: "run ended", aborted: "run stopped", failed: "run failed" }[e.ending] || "run ended";
        const cost = typeof e.cost_usd === "number" ? " · " + PS.money(e.cost_usd) : "";
        const li = PS.el("li", "said run-end " + e.ending, "— " + words + cost + " · " + PS.clock(e.at_ms) + " —");
        if (e.error) li.append(PS.el("div", "error", e.error));
        return li;
      }
      default:
        return null;
    }
  }

  head(who, at) {
    const h = PS.el("div", "who");
    h.append(PS.el("span", "name", who), PS.el("span", "at", PS.clock(at)));
    return h;
  }
};
