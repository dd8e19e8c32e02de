// The web view's service worker: it shows the pushes pokeshell's server sends (Web Push) while no
// page is open, with their buttons, and does what a button says: "open" opens (or focuses) the
// page; any other action POSTs its capability URL (a POST acts; a GET only shows a page with one
// button). It caches nothing: the page always comes from the server.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

// A push's JSON: {title, body, url, tag, actions: [{action, title, url}]}.
function readPush(data) {
  if (!data) return { title: "pokeshell", body: "" };
  try { return data.json(); } catch (e) { return { title: "pokeshell", body: data.text() }; }
}

self.showPush = function (p) {
  const actions = Array.isArray(p.actions) ? p.actions : [];
  const most = (self.Notification && Notification.maxActions) || 2;
  return self.registration.showNotification(p.title || "pokeshell", {
    body: p.body || "",
    tag: p.tag || undefined,
    renotify: Boolean(p.tag),
    icon: "/icon-192.png",
    badge: "/icon-192.png",
    data: { url: p.url || "/", actions },
    actions: actions.slice(0, most).map((a) => ({ action: a.action, title: a.title })),
  });
};

self.addEventListener("push", (event) => event.waitUntil(self.showPush(readPush(event.data))));

// The page, focused when one is open, else opened at `url`.
async function openPage(url) {
  const target = new URL(url || "/", self.location.origin);
  const pages = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const page of pages) {
    if (new URL(page.url).origin === self.location.origin && "focus" in page) {
      if ("navigate" in page) await page.navigate(target.href).catch(() => {});
      return page.focus();
    }
  }
  return self.clients.openWindow(target.href);
}

// What a click on the notification (`action` empty) or on one of its buttons does. A capability
// URL is fetched on this worker's own origin, whatever address it names, so the page's CSP holds.
self.onAction = async function (data, action) {
  const chosen = (data.actions || []).find((a) => a.action === action);
  if (!chosen || chosen.action === "open") return openPage((chosen && chosen.url) || data.url);
  const url = new URL(chosen.url, self.location.origin);
  const here = new URL(url.pathname + url.search, self.location.origin);
  let ok = false;
  try {
    const answer = await fetch(here.href, { method: "POST", credentials: "omit", redirect: "manual" });
    ok = answer.ok;
  } catch (e) { ok = false; }
  // Refused (used, expired, the agent moved on) or not reached: its page says why.
  if (!ok) return openPage(here.href);
  return self.registration.showNotification("pokeshell", { body: chosen.title + ": done", tag: "pokeshell-done", icon: "/icon-192.png" });
};

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(self.onAction(event.notification.data || {}, event.action));
});
