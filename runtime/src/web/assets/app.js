// mobiwf pages: the one script. No inline script anywhere (the Content-Security-Policy
// forbids it); every page works without it, this only keeps what is shown current.
"use strict";

// "in 2h 05m", "3m 10s ago": the time to `dueMs` from `nowMs`.
function countdown(dueMs, nowMs) {
  var left = dueMs - nowMs;
  var s = Math.floor(Math.abs(left) / 1000);
  var d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600);
  var m = Math.floor((s % 3600) / 60), sec = s % 60;
  var text;
  if (d > 0) { text = d + "d " + h + "h"; }
  else if (h > 0) { text = h + "h " + (m < 10 ? "0" : "") + m + "m"; }
  else { text = m + "m " + (sec < 10 ? "0" : "") + sec + "s"; }
  return left >= 0 ? "in " + text : text + " ago";
}

// Every deadline on the page: its text, and red once under its last notice.
function tick() {
  var now = Date.now();
  document.querySelectorAll("time.due[data-due-ms]").forEach(function (el) {
    var due = Number(el.getAttribute("data-due-ms"));
    var warn = el.hasAttribute("data-warn-ms") ? Number(el.getAttribute("data-warn-ms")) : due;
    el.textContent = countdown(due, now);
    el.classList.toggle("late", now >= warn);
  });
}

// The worklist follows the desk: each `worklist` event is the list as the server renders it.
function follow() {
  var list = document.getElementById("worklist");
  if (!list || !window.EventSource) { return; }
  var source = new EventSource(list.getAttribute("data-events"));
  source.addEventListener("worklist", function (event) {
    var current = document.getElementById("worklist");
    if (!current) { return; }
    var holder = document.createElement("div");
    holder.innerHTML = event.data;
    var fresh = holder.firstElementChild;
    if (fresh) { current.replaceWith(fresh); tick(); }
  });
  source.addEventListener("open", function () { document.body.classList.remove("offline"); });
  source.addEventListener("error", function () { document.body.classList.add("offline"); });
}

// A part of a page that follows the server (the console's instance): each `instance` event of
// its `data-live` stream is the part as the server renders it, put in its place. Only when the
// stream cannot be had (no EventSource, or the server refused it: too many open, signed out)
// do the `[data-refresh]` parts inside fall back to being fetched again every
// `data-refresh-ms`: slower, and only what they show (the graph).
function live() {
  var part = document.querySelector("[data-live]");
  if (!part) { return; }
  // Looked up when needed: each event puts new markup in the part.
  var inside = function () { return part.querySelectorAll("[data-refresh]"); };
  if (!window.EventSource) { refresh(inside()); return; }
  var url = part.getAttribute("data-live");
  var since = part.getAttribute("data-since");
  if (since) { url += "?since=" + encodeURIComponent(since); }
  var source = new EventSource(url);
  source.addEventListener("instance", function (event) {
    var current = document.querySelector("[data-live]");
    if (!current) { return; }
    current.innerHTML = event.data;
    current.setAttribute("data-since", event.lastEventId);
  });
  source.addEventListener("open", function () { document.body.classList.remove("offline"); });
  source.addEventListener("error", function () {
    document.body.classList.add("offline");
    // Closed for good (the server refused it): the browser will not try again, so poll.
    if (source.readyState === EventSource.CLOSED) { refresh(inside()); }
  });
}

// Every `data-refresh-ms`, each of `parts` has its markup fetched again from its
// `data-refresh`: the parts no stream keeps current (the worklist's link to the hosts, whose
// state changes with no reload, as when a host answers a claim after the page was drawn), and
// the fallback of `live` for those inside its part.
function refresh(parts) {
  Array.prototype.forEach.call(parts, function (el) {
    var every = Number(el.getAttribute("data-refresh-ms")) || 30000;
    setInterval(function () {
      fetch(el.getAttribute("data-refresh"), { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) { throw new Error(String(r.status)); } return r.text(); })
        .then(function (markup) {
          el.innerHTML = markup;
          document.body.classList.remove("offline");
        })
        .catch(function () { document.body.classList.add("offline"); });
    }, every);
  });
}

document.addEventListener("DOMContentLoaded", function () {
  tick();
  setInterval(tick, 1000);
  follow();
  live();
  refresh(Array.prototype.filter.call(document.querySelectorAll("[data-refresh]"), function (el) {
    return !el.closest("[data-live]");
  }));
});
