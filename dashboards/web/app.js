// Firebreak's web page: live sandboxes, incidents, and an incident's timeline as swimlanes, one
// per tool-call step. Everything comes from the HTTP API (docs/api.md) with the read token; the
// freeze/thaw/kill buttons ask for the action token. No framework, nothing fetched from elsewhere.
"use strict";

const tokens = { read: sessionStorage.getItem("fb-read") || "", action: sessionStorage.getItem("fb-action") || "" };
const state = { sandboxes: new Map(), incident: null, lanes: new Map(), since: 0, until: 0 };
const $ = (sel) => document.querySelector(sel);

// The token may come in the fragment (#token=...&incident=N), which never reaches the server.
function readFragment() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.get("token")) {
    tokens.read = p.get("token");
    sessionStorage.setItem("fb-read", tokens.read);
    p.delete("token");
    history.replaceState(null, "", "#" + p.toString());
  }
  return p;
}

async function api(path, opts = {}) {
  const token = opts.action ? tokens.action : tokens.read;
  const r = await fetch(path, { method: opts.method || "GET", headers: { Authorization: "Bearer " + token } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (body.error || ""));
  return body;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

function showError(msg) {
  $("#error").hidden = !msg;
  $("#error").textContent = msg || "";
}

function fmtTime(ns) {
  return new Date(Number(BigInt(ns) / 1000000n)).toLocaleTimeString();
}

function fmtBytes(b) {
  if (b == null || b < 0) return "";
  const u = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return b.toFixed(i ? 1 : 0) + " " + u[i];
}

// Sparklines of a sandbox's cpu and memory from the stats samples seen (the latest 40).
function spark(values) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("viewBox", "0 0 90 22");
  if (values.length > 1) {
    const max = Math.max(...values), min = Math.min(...values), span = max - min || 1;
    const pts = values.map((v, i) => (i * 90 / (values.length - 1)).toFixed(1) + "," + (20 - (v - min) * 18 / span).toFixed(1));
    const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    line.setAttribute("points", pts.join(" "));
    svg.append(line);
  }
  return svg;
}

function sandboxRow(sb) {
  const s = state.sandboxes.get(sb.name) || { cpu: [], mem: [], pids: null, lastCpu: null };
  state.sandboxes.set(sb.name, Object.assign(s, sb));
  const act = (what) => el("button", { onclick: () => doAction(sb.name, what) }, what);
  const live = sb.state === "running" || sb.state === "frozen";
  return el("tr", { "data-sandbox": sb.name },
    el("td", {}, sb.name), el("td", { class: "state-" + sb.state }, sb.state), el("td", {}, String(sb.steps ?? "")),
    el("td", {}, spark(s.cpu)), el("td", {}, spark(s.mem), " " + fmtBytes(s.mem[s.mem.length - 1])),
    el("td", {}, s.pids == null ? "" : String(s.pids)),
    el("td", {}, ...(live ? [act("freeze"), " ", act("thaw"), " ", act("kill")] : [])));
}

async function doAction(name, what) {
  if (!tokens.action) {
    tokens.action = prompt("Action token (/etc/firebreak/http-action.token) to " + what + " " + name + ":") || "";
    if (!tokens.action) return;
    sessionStorage.setItem("fb-action", tokens.action);
  }
  try {
    const r = await api("/api/v1/sandboxes/" + encodeURIComponent(name) + "/" + what, { method: "POST", action: true });
    showError("");
    alert(name + ": " + what + " " + r.result);
  } catch (e) {
    if (String(e).includes(" 403") || String(e).includes(" 401")) { tokens.action = ""; sessionStorage.removeItem("fb-action"); }
    showError(String(e));
  }
  loadHome();
}

async function loadHome() {
  const [sbs, incs] = await Promise.all([api("/api/v1/sandboxes"), api("/api/v1/incidents")]);
  const tb = $("#sandboxes tbody");
  tb.replaceChildren(...sbs.sandboxes.map(sandboxRow));
  $("#incidents tbody").replaceChildren(...incs.incidents.map((i) =>
    el("tr", { "data-incident": i.id },
      el("td", {}, el("a", { href: "#incident=" + i.id }, String(i.id))), el("td", {}, i.sandbox),
      el("td", { class: "sev-" + i.severity }, i.severity), el("td", {}, i.state), el("td", {}, i.summary),
      el("td", {}, fmtTime(i.opened_ts)))));
}

// What an event is on the swimlanes.
function category(ev) {
  const k = ev.kind, f = ev.fields || {};
  if (k === "proc.exec") return "exec";
  if (k === "net.denied" || ((k === "net.connect" || k === "net.sendmsg") && f.egress_hook === "refused")) return "denied";
  if (k.startsWith("net.") || k.startsWith("dns.")) return "connect";
  if (k === "seccomp.denied") return "seccomp";
  if (k === "lure.tripwire" && f.refused) return "denied";
  if (k.startsWith("file.") || k.startsWith("lure.")) return "file";
  if (k === "cgroup.stats") return "resource";
  if (k === "verdict") return "verdict";
  if (k.startsWith("action.")) return "action";
  return "other";
}

const CATEGORIES = ["exec", "connect", "file", "denied", "seccomp", "resource", "verdict", "action"];

function laneFor(step, tool) {
  const key = step == null ? "sandbox" : String(step);
  let lane = state.lanes.get(key);
  if (!lane) {
    const label = el("div", { class: "lane-label" }, step == null ? el("b", {}, "sandbox") : el("b", {}, "step " + step), tool ? " · " + tool : "");
    const track = el("div", { class: "track" });
    lane = { el: el("div", { class: "lane", "data-step": key }, label, track), track, step, peak: {} };
    state.lanes.set(key, lane);
    const sorted = [...state.lanes.values()].sort((a, b) => (a.step ?? -1) - (b.step ?? -1));
    $("#swimlanes").replaceChildren(...sorted.map((l) => l.el));
  }
  return lane;
}

function x(ts) {
  const span = Math.max(1, state.until - state.since);
  // ns since the epoch as doubles: a quarter of a microsecond of precision, plenty for a page.
  return Math.min(100, Math.max(0, (ts - state.since) / span * 100));
}

function place(ev) {
  if (ev.kind.startsWith("tool_call.")) {
    const lane = laneFor(ev.step, ev.tool);
    if (((ev.fields || {}).annotations || {}).coerced) lane.el.classList.add("coerced");
    return;
  }
  const cat = category(ev);
  const lane = laneFor(ev.step, ev.tool);
  if (cat === "resource") {
    // A resource sample is placed only where it is a new peak for its lane.
    const f = ev.fields || {}, m = f.memory_current || 0, p = f.pids_current || 0;
    if (m <= (lane.peak.m || 0) && p <= (lane.peak.p || 0)) return;
    lane.peak = { m: Math.max(m, lane.peak.m || 0), p: Math.max(p, lane.peak.p || 0) };
  }
  const dot = el("span", { class: "ev ev-" + cat, "data-kind": ev.kind, "data-id": String(ev.id),
    title: ev.kind + " @ " + fmtTime(ev.ts) });
  // Through the CSSOM: the page's content security policy allows no inline style attribute.
  dot.style.left = x(ev.ts).toFixed(3) + "%";
  dot.addEventListener("click", () => { $("#detail").textContent = JSON.stringify(ev, null, 2); });
  lane.track.append(dot);
}

async function loadIncident(id) {
  const d = await api("/api/v1/incidents/" + id);
  state.incident = d;
  state.lanes = new Map();
  $("#swimlanes").replaceChildren();
  $("#detail").textContent = "";
  $("#incident-title").textContent = "Incident " + id + " · " + d.incident.sandbox + " · " + d.incident.severity;
  $("#summary").textContent = d.story.summary;
  $("#legend").replaceChildren(...CATEGORIES.map((c) => el("span", {}, el("i", { class: "ev-" + c }), c)));
  // The whole window, page by page; then the lanes are drawn against its span of time.
  const events = [];
  let cursor = null;
  const until = d.timeline.until;
  do {
    const q = "since=" + d.timeline.since + (until ? "&until=" + until : "") + "&limit=5000" + (cursor ? "&cursor=" + cursor : "");
    const page = await api("/api/v1/sandboxes/" + encodeURIComponent(d.incident.sandbox) + "/timeline?" + q);
    events.push(...page.events);
    cursor = page.next_cursor;
  } while (cursor);
  // The axis ends at the incident's last telling event (exec, network, seccomp, verdict, action):
  // resource samples that keep coming after it would squeeze the story to the left.
  state.since = d.timeline.since;
  state.until = state.since;
  for (const ev of events)
    if (!["resource", "other"].includes(category(ev)) && !ev.kind.startsWith("tool_call.") && ev.ts > state.until) state.until = ev.ts;
  state.until += Math.max(1, (state.until - state.since) * 0.02);
  for (const ev of events) place(ev);
  // The step the harness marked coerced, whether or not its start is inside the window.
  if (d.story.coerced_step != null) laneFor(d.story.coerced_step, null).el.classList.add("coerced");
  $("#swimlanes").dataset.events = String(events.length);
}

// A replay of the open incident (POST .../replay: reads only, the read token will do).
async function runReplay() {
  const id = state.incident.incident.id, body = $("#replay-policy").value.trim();
  const r = await fetch("/api/v1/incidents/" + id + "/replay", { method: "POST", body,
    headers: { Authorization: "Bearer " + tokens.read } });
  const d = await r.json().catch(() => ({}));
  const out = $("#replay-out");
  if (!r.ok) { out.replaceChildren(el("p", { class: "bug" }, "replay: " + (d.error || r.status))); return; }
  const item = (cls, v) => el("li", { class: cls }, cls + " " + v.rule + " (" + v.severity + ") -> " + v.action +
    (v.step != null ? " at step " + v.step : "") + ": " + v.reason);
  const stop = (v) => v ? v.action + " by " + v.rule + (v.step != null ? " at step " + v.step : "") : "none";
  const parts = [];
  if (!body) {
    parts.push(el("p", { class: d.determinism_bugs.length ? "bug" : "same" }, d.determinism_bugs.length
      ? "DETERMINISM BUG: " + d.determinism_bugs.length + " verdicts differ from the recorded ones"
      : d.replayed.length + " verdicts, identical to the recorded ones (" + d.events + " events)"));
  } else {
    parts.push(el("ul", {}, ...d.added.map((v) => item("added", v)), ...d.removed.map((v) => item("removed", v)),
      ...d.changed.map((c) => item("changed", c.replayed))));
    if (!d.added.length && !d.removed.length && !d.changed.length) parts.push(el("p", { class: "same" }, "the same verdicts"));
  }
  parts.push(el("p", {}, "first stop: recorded " + stop(d.recorded_first_stop) + "; replayed " + stop(d.replayed_first_stop)));
  out.replaceChildren(...parts);
}

async function getBundle() {
  const id = state.incident.incident.id;
  const r = await fetch("/api/v1/incidents/" + id + "/bundle", { headers: { Authorization: "Bearer " + tokens.read } });
  if (!r.ok) return showError("bundle: " + r.status);
  const a = el("a", { href: URL.createObjectURL(await r.blob()), download: "firebreak-incident-" + id + ".db" });
  a.click();
}

// The live stream: fetch, so the token can go in a header (EventSource cannot send one).
async function stream() {
  for (;;) {
    try {
      const r = await fetch("/api/v1/events/stream?kind=cgroup.stats,verdict,action.*,sandbox.*,step.*,tool_call.*",
        { headers: { Authorization: "Bearer " + tokens.read } });
      if (!r.ok) throw new Error("stream: " + r.status);
      $("#live").className = "live on";
      const reader = r.body.getReader(), dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const msg = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = msg.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (e) { /* reconnect below */ }
    $("#live").className = "live off";
    await new Promise((res) => setTimeout(res, 2000));
  }
}

function onEvent(ev) {
  const s = state.sandboxes.get(ev.sandbox);
  if (ev.kind === "cgroup.stats" && s && ev.step == null) {
    const f = ev.fields || {};
    if (f.cpu_usage_us != null) {
      if (s.lastCpu != null) s.cpu.push(f.cpu_usage_us - s.lastCpu);
      s.lastCpu = f.cpu_usage_us;
    }
    if (f.memory_current != null) s.mem.push(f.memory_current);
    if (f.pids_current != null) s.pids = f.pids_current;
    s.cpu = s.cpu.slice(-40);
    s.mem = s.mem.slice(-40);
    const row = document.querySelector('tr[data-sandbox="' + CSS.escape(ev.sandbox) + '"]');
    if (row) row.replaceWith(sandboxRow(s));
  } else if (!$("#home").hidden && (ev.kind === "verdict" || ev.kind.startsWith("action.") || ev.kind.startsWith("sandbox."))) {
    loadHome().catch((e) => showError(String(e)));
  }
  if (state.incident && !$("#incident").hidden && ev.sandbox === state.incident.incident.sandbox) {
    place(ev);
  }
}

async function route() {
  const p = readFragment();
  showError("");
  if (!tokens.read) {
    $("#login").hidden = false;
    $("#home").hidden = $("#incident").hidden = true;
    return false;
  }
  $("#login").hidden = true;
  const id = p.get("incident");
  $("#home").hidden = !!id;
  $("#incident").hidden = !id;
  try {
    await (id ? loadIncident(id) : loadHome());
    if (id && p.get("replay")) await runReplay(); /* #incident=N&replay=1 */
    document.body.dataset.ready = "1";
  } catch (e) {
    showError(String(e));
    if (String(e).includes(" 401")) { tokens.read = ""; sessionStorage.removeItem("fb-read"); }
  }
  return true;
}

$("#login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  tokens.read = $("#login-token").value.trim();
  sessionStorage.setItem("fb-read", tokens.read);
  route().then((ok) => ok && stream());
});
$("#replay-run").addEventListener("click", () => runReplay().catch((e) => showError(String(e))));
$("#bundle-get").addEventListener("click", () => getBundle().catch((e) => showError(String(e))));
$("#nav-home").addEventListener("click", (e) => { e.preventDefault(); location.hash = ""; });
window.addEventListener("hashchange", () => { route(); });
route().then((ok) => ok && stream());
