// "Notify me": the browser's permission, then, where the browser can (a service worker over
// HTTPS or on this machine, and a push service), a Web Push subscription made with the server's
// public key and handed to the server, so that this device hears pokeshell while no page is open.
// Without push, notifications still come while a page is open (app.js raises them).
"use strict";
window.PS = window.PS || {};

PS.push = {
  reg: null,
  on: false,
  supported() {
    return window.isSecureContext && "serviceWorker" in navigator && "PushManager" in window;
  },

  // The worker is registered on every load: it is what makes the page an app a phone can add to its
  // home screen, and what shows pushes.
  async start(send) {
    this.send = send;
    if (!this.supported()) return;
    try {
      this.reg = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
      const sub = await this.reg.pushManager.getSubscription();
      // Told again at every load: the server keeps it even if it lost it meanwhile.
      if (sub && "Notification" in window && Notification.permission === "granted") this.hand(sub);
    } catch (e) { /* no worker here: the page's own notifications remain */ }
  },

  // After the person allowed notifications: ask for the server's key (the answer comes as push_key).
  ask() {
    if (this.supported() && this.reg) this.send({ type: "push_key" });
  },

  async onKey(key, say) {
    try {
      const want = PS.push.bytes(key);
      let sub = await this.reg.pushManager.getSubscription();
      const had = sub && sub.options && sub.options.applicationServerKey;
      if (sub && had && !PS.push.same(new Uint8Array(had), want)) { await sub.unsubscribe(); sub = null; }
      if (!sub) sub = await this.reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: want });
      this.hand(sub);
    } catch (e) {
      say("this browser's push service cannot be reached (" + e.message + "): notifications come while a page is open", true);
    }
  },

  hand(sub) {
    const j = sub.toJSON();
    this.send({ type: "push_subscribe", endpoint: j.endpoint, keys: j.keys, origin: location.origin });
  },

  async stop() {
    const sub = this.reg && (await this.reg.pushManager.getSubscription());
    if (!sub) return;
    this.send({ type: "push_unsubscribe", endpoint: sub.endpoint });
    await sub.unsubscribe().catch(() => {});
  },

  bytes(b64url) {
    const b64 = b64url.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64url.length + 3) % 4);
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  },

  same(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
  },
};
