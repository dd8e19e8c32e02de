// The session's screen: xterm.js showing the pane's bytes. A watching page sizes its terminal to
// the pane (the server says the pane's size) and shrinks its font to fit the width; a page that
// took the keyboard sizes the pane to itself.
"use strict";
window.PS = window.PS || {};

PS.KEYS = {
  esc: "\x1b", tab: "\t", enter: "\r", "ctrl-c": "\x03",
  up: "\x1b[A", down: "\x1b[B", right: "\x1b[C", left: "\x1b[D",
};

PS.Screen = class {
  // The bell and the notification sequences in the pane's bytes are not raised here: the server
  // tells the page every session's notes (the "note" message), this one's included.
  constructor(box, onData) {
    this.box = box;
    this.fontSize = 14;
    this.term = new Terminal({ fontSize: this.fontSize, scrollback: 0, cursorBlink: false, allowProposedApi: false,
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, monospace" });
    this.term.open(box);
    this.term.onData(onData);
    this.ratio = PS.Screen.charRatio();
  }

  static charRatio() {
    const c = document.createElement("canvas").getContext("2d");
    c.font = "100px ui-monospace, 'DejaVu Sans Mono', Menlo, monospace";
    return c.measureText("WWWWWWWWWW").width / 1000 || 0.6;
  }

  write(bytes) { this.term.write(bytes); }

  reset() { this.term.reset(); }

  // The pane's size: the terminal takes it and the font shrinks (never grows past 14px) to fit.
  fitPane(cols, rows) {
    const width = this.box.clientWidth || window.innerWidth;
    const size = Math.max(5, Math.min(14, Math.floor((width - 4) / (cols * this.ratio))));
    if (size !== this.term.options.fontSize) this.term.options.fontSize = size;
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    requestAnimationFrame(() => this.scaleToBox());
  }

  // Cells are whole pixels, so at small fonts the terminal can still be wider than the box: it is
  // then scaled down to fit, as a picture.
  scaleToBox() {
    const el = this.box.querySelector(".xterm-screen");
    const inner = this.box.firstElementChild;
    if (!el || !inner) return;
    inner.style.transform = "";
    this.box.style.height = "";
    const width = this.box.clientWidth;
    const scale = el.offsetWidth > width ? width / el.offsetWidth : 1;
    if (scale < 1) {
      inner.style.transformOrigin = "0 0";
      inner.style.transform = "scale(" + scale + ")";
      this.box.style.height = Math.ceil(el.offsetHeight * scale) + "px";
    }
  }

  // The size this page would give the pane at a readable font.
  ownSize() {
    const inner = this.box.firstElementChild;
    if (inner) inner.style.transform = "";
    this.box.style.height = "";
    const width = this.box.clientWidth || window.innerWidth;
    const height = Math.max(200, window.innerHeight - this.box.getBoundingClientRect().top - 120);
    const cols = Math.max(20, Math.min(300, Math.floor((width - 4) / (14 * this.ratio))));
    const rows = Math.max(8, Math.min(120, Math.floor(height / (14 * 1.2))));
    return { cols, rows };
  }

  focus() { this.term.focus(); }
};
