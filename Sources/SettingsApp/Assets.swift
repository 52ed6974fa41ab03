/// The page, shipped inside the program: no CDN, no build step. The HTML
/// loads only `/app.css` and `/app.js` (the Content-Security-Policy allows
/// no inline script or style); the script draws everything from the JSON
/// routes, follows `/api/events` and sends its changes on `/api/socket`.
public enum Assets {
    public static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Settings</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<div id="layout">
  <nav id="sidebar" aria-label="Apps">
    <h1>Settings</h1>
    <ul id="app-list"></ul>
  </nav>
  <main id="pane" tabindex="-1">
    <p class="hint">Choose an app.</p>
  </main>
</div>
<div id="status" role="status" aria-live="polite" class="visually-hidden"></div>
<dialog id="confirm" aria-labelledby="confirm-title">
  <form method="dialog">
    <p id="confirm-title"></p>
    <div class="dialog-buttons">
      <button value="cancel" id="confirm-cancel">Cancel</button>
      <button value="reset" id="confirm-reset" class="destructive">Reset</button>
    </div>
  </form>
</dialog>
</body>
</html>
"""#

    public static let css = #"""
:root {
  --bg: #f2f2f7; --cell: #ffffff; --text: #000000; --secondary: #6c6c70; --separator: #c6c6c8;
  --accent: #007aff; --on: #34c759; --off: #e9e9eb; --danger: #ff3b30; --selected: #d1d1d6;
  font-family: -apple-system, system-ui, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #000000; --cell: #1c1c1e; --text: #ffffff; --secondary: #98989f; --separator: #38383a;
          --accent: #0a84ff; --on: #30d158; --off: #39393d; --danger: #ff453a; --selected: #3a3a3c; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); font-size: 17px; }
#layout { display: flex; min-height: 100vh; }
#sidebar { width: 17rem; flex: none; padding: 1rem; border-right: 1px solid var(--separator); }
#sidebar h1 { font-size: 2rem; margin: .5rem .25rem 1rem; }
#app-list { list-style: none; margin: 0; padding: 0; background: var(--cell); border-radius: 10px; overflow: hidden; }
#app-list li + li { border-top: 1px solid var(--separator); }
.app-button { display: flex; align-items: center; gap: .75rem; width: 100%; padding: .55rem .75rem; border: 0;
              background: none; color: var(--text); font: inherit; text-align: left; cursor: pointer; }
.app-button[aria-current="page"] { background: var(--selected); }
.app-icon { width: 29px; height: 29px; border-radius: 7px; background: var(--accent); color: #fff; flex: none;
            display: inline-flex; align-items: center; justify-content: center; font-weight: 600; object-fit: cover; }
.app-version { display: block; color: var(--secondary); font-size: .8rem; }
#pane { flex: 1; padding: 1rem 1.5rem 3rem; max-width: 46rem; outline: none; }
.nav-bar { display: flex; align-items: center; min-height: 2.5rem; }
.back { border: 0; background: none; color: var(--accent); font: inherit; cursor: pointer; padding: .25rem 0; }
.back::before { content: "‹ "; font-size: 1.3em; }
h2 { font-size: 1.9rem; margin: .25rem 0 1rem; }
.section-title { color: var(--secondary); font-size: .8rem; text-transform: uppercase; margin: 1.5rem 1rem .4rem; font-weight: 400; }
.group { background: var(--cell); border-radius: 10px; overflow: hidden; }
.footer { color: var(--secondary); font-size: .8rem; margin: .4rem 1rem 0; }
.row { display: flex; align-items: center; gap: .75rem; min-height: 2.75rem; padding: .35rem 1rem; width: 100%;
       border: 0; background: none; color: var(--text); font: inherit; text-align: left; }
.group > * + * { border-top: 1px solid var(--separator); }
.row-title { flex: 1; }
.row .value { color: var(--secondary); }
button.row { cursor: pointer; }
button.row:not(.choice)::after { content: "›"; color: var(--secondary); font-size: 1.3em; }
.row input[type="text"], .row input[type="password"] { flex: 1; border: 0; background: none; color: var(--text);
       font: inherit; text-align: right; padding: .25rem; }
.row input[type="range"] { flex: 1; accent-color: var(--accent); }
.slider-image { width: 22px; height: 22px; }
input[role="switch"] { appearance: none; width: 51px; height: 31px; border-radius: 16px; background: var(--off);
       position: relative; cursor: pointer; flex: none; margin: 0; transition: background .2s; }
input[role="switch"]::before { content: ""; position: absolute; top: 2px; left: 2px; width: 27px; height: 27px;
       border-radius: 50%; background: #fff; box-shadow: 0 2px 4px rgba(0,0,0,.25); transition: left .2s; }
input[role="switch"]:checked { background: var(--on); }
input[role="switch"]:checked::before { left: 22px; }
input:disabled, button:disabled { opacity: .5; cursor: not-allowed; }
.choice { cursor: pointer; }
.choice input { position: absolute; opacity: 0; width: 1px; height: 1px; }
.choice .check { color: var(--accent); visibility: hidden; font-weight: 600; }
.choice input:checked ~ .check, .choice[aria-checked="true"] .check { visibility: visible; }
.choice:has(input:focus-visible) { outline: 2px solid var(--accent); outline-offset: -2px; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
.managed { display: block; color: var(--secondary); font-size: .75rem; }
.reason { color: var(--danger); font-size: .85rem; margin: 0; padding: .35rem 1rem .5rem; }
.actions { margin-top: 2rem; }
.reset { width: 100%; border: 0; border-radius: 10px; background: var(--cell); color: var(--danger); font: inherit;
         padding: .75rem; cursor: pointer; }
details.raw { margin-top: 1.5rem; }
details.raw summary { cursor: pointer; color: var(--accent); padding: .5rem 0; }
table { width: 100%; border-collapse: collapse; background: var(--cell); border-radius: 10px; font-size: .85rem; }
th, td { text-align: left; padding: .4rem .75rem; border-top: 1px solid var(--separator); vertical-align: top; }
td.raw-value { font-family: ui-monospace, monospace; word-break: break-all; }
.raw-input { width: 100%; font: inherit; color: var(--text); background: var(--bg); border: 1px solid var(--separator); border-radius: 6px; padding: .2rem .4rem; }
dialog { border: 0; border-radius: 14px; background: var(--cell); color: var(--text); padding: 1.25rem; max-width: 22rem; }
dialog::backdrop { background: rgba(0,0,0,.35); }
.dialog-buttons { display: flex; gap: .75rem; justify-content: flex-end; }
.dialog-buttons button { font: inherit; border: 0; border-radius: 8px; padding: .5rem 1rem; background: var(--off); color: var(--text); cursor: pointer; }
.dialog-buttons .destructive { background: var(--danger); color: #fff; }
.hint { color: var(--secondary); }
@media (prefers-reduced-motion: reduce) { * { transition: none !important; } }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
"""#

    public static let javascript = #"""
"use strict";
(() => {
  const state = { apps: [], app: null, doc: null, stack: [], saved: 0 };
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  };
  const announce = (text) => { $("#status").textContent = text; };
  const same = (a, b) => a === b || (typeof a === "number" && typeof b === "number" && Math.abs(a - b) < 1e-9);
  let uid = 0;
  const nextId = () => "c" + (++uid);

  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    if (!r.ok) throw new Error(await r.text());
    return r.json();
  }

  async function loadApps() {
    // The app the address names is fetched beside the list, not after it.
    const wanted = decodeURIComponent(location.hash.slice(1));
    const early = wanted ? getJSON("/api/apps/" + encodeURIComponent(wanted)).catch(() => null) : null;
    state.apps = await getJSON("/api/apps");
    const list = $("#app-list");
    list.replaceChildren();
    for (const app of state.apps) {
      const icon = app.icon ? el("img", { class: "app-icon", src: "/api/apps/" + encodeURIComponent(app.id) + "/icon", alt: "" })
                            : el("span", { class: "app-icon", "aria-hidden": "true", text: app.name.slice(0, 1).toUpperCase() });
      const button = el("button", { class: "app-button", "data-app": app.id, onclick: () => openApp(app.id) }, icon,
        el("span", {}, document.createTextNode(app.name), el("span", { class: "app-version", text: "Version " + app.version })));
      if (!app.settings) button.disabled = true;
      list.append(el("li", {}, button));
    }
    const first = state.apps.find((a) => a.id === wanted && a.settings) || state.apps.find((a) => a.settings);
    if (first) await openApp(first.id, false, first.id === wanted && early ? await early : null);
  }

  async function openApp(id, focus = true, doc = null) {
    state.app = id;
    state.doc = doc || await getJSON("/api/apps/" + encodeURIComponent(id));
    state.stack = [{ page: state.doc.pages[0].file }];
    for (const b of document.querySelectorAll(".app-button")) b.toggleAttribute("aria-current", b.dataset.app === id);
    for (const b of document.querySelectorAll(".app-button")) if (b.dataset.app === id) b.setAttribute("aria-current", "page");
    history.replaceState(null, "", "#" + encodeURIComponent(id));
    render(focus);
  }

  const page = (file) => state.doc.pages.find((p) => p.file === file);
  const isManaged = (key) => state.doc.managed.includes(key);

  function render(focus, focusSelector) {
    const pane = $("#pane");
    const top = state.stack[state.stack.length - 1];
    const nav = el("div", { class: "nav-bar" });
    if (state.stack.length > 1) {
      const parent = state.stack[state.stack.length - 2];
      nav.append(el("button", { class: "back", onclick: () => { const gone = state.stack.pop(); render(true, gone.opener); }, text: page(parent.page).title }));
    }
    const body = [nav];
    if (top.choose) {
      body.push(...renderChoices(top.choose));
    } else {
      const p = page(top.page);
      body.push(el("h2", { id: "page-title", text: p.title }));
      for (const section of p.sections) body.push(...renderSection(section));
      if (state.stack.length === 1) body.push(...renderFooter());
    }
    pane.replaceChildren(...body);
    pane.dataset.app = state.app;
    if (focus) {
      const first = (focusSelector && pane.querySelector(focusSelector)) || pane.querySelector('[aria-checked="true"]')
                    || pane.querySelector("button, input, summary");
      (first || pane).focus();
    }
  }

  function renderSection(section) {
    const out = [];
    const titleId = nextId();
    if (section.title) out.push(el("h3", { class: "section-title", id: titleId, text: section.title }));
    const group = el("div", { class: "group", role: "group", "aria-labelledby": section.title ? titleId : null });
    for (const row of section.rows) group.append(...renderRow(row, section));
    out.push(group);
    if (section.footer) out.push(el("p", { class: "footer", text: section.footer }));
    return out;
  }

  function titleOf(row, value) {
    const i = row.values.findIndex((v) => same(v, value));
    if (i < 0) return value === null || value === undefined ? "" : String(value);
    const short = row.shortTitles && row.shortTitles[i];
    return short || row.titles[i] || String(value);
  }

  function managedNote(row) {
    return row.key && isManaged(row.key) ? el("span", { class: "managed", text: "Managed by your administrator" }) : null;
  }

  function renderRow(row, section) {
    const value = row.key ? state.doc.values[row.key] : null;
    const locked = row.key && isManaged(row.key);
    const id = nextId();
    const label = row.title || section.title || row.key;
    let node;
    switch (row.kind) {
      case "toggle": {
        const on = row.trueValue !== null ? same(value, row.trueValue) : value === true;
        const input = el("input", { type: "checkbox", role: "switch", id, "data-key": row.key, disabled: locked });
        input.checked = on;
        input.addEventListener("change", () => send(row.key, input.checked));
        node = el("div", { class: "row", "data-row": row.key }, el("label", { class: "row-title", for: id }, document.createTextNode(row.title || row.key), managedNote(row)), input);
        break;
      }
      case "slider": {
        const input = el("input", { type: "range", id, min: row.min, max: row.max, step: "any", "data-key": row.key,
                                    "aria-label": row.title || row.key, disabled: locked });
        input.value = value;
        input.addEventListener("change", () => send(row.key, Number(input.value)));
        const img = (name) => name ? el("img", { class: "slider-image", alt: "", src: "/api/apps/" + encodeURIComponent(state.app) + "/image/" + encodeURIComponent(name) }) : null;
        node = el("div", { class: "row slider", "data-row": row.key }, img(row.minImage), input, img(row.maxImage), managedNote(row));
        break;
      }
      case "text": {
        const input = el("input", { type: row.secure ? "password" : "text", id, "data-key": row.key, disabled: locked,
          inputmode: ({ NumberPad: "numeric", NumbersAndPunctuation: "decimal", URL: "url", EmailAddress: "email" })[row.keyboard] || "text",
          autocapitalize: ({ None: "none", Words: "words", Sentences: "sentences", AllCharacters: "characters" })[row.autocapitalization] || null,
          autocorrect: row.autocorrection === "No" ? "off" : row.autocorrection === "Yes" ? "on" : null,
          spellcheck: row.autocorrection === "No" ? "false" : null, autocomplete: row.secure ? "new-password" : "off" });
        input.value = value === null || value === undefined ? "" : String(value);
        input.addEventListener("change", () => send(row.key, input.value));
        node = el("div", { class: "row", "data-row": row.key }, el("label", { class: "row-title", for: id }, document.createTextNode(row.title || row.key), managedNote(row)), input);
        break;
      }
      case "multi": {
        const button = el("button", { class: "row", "data-row": row.key, "data-key": row.key, "aria-haspopup": "true", disabled: locked,
                                      onclick: () => { state.stack.push({ choose: row, opener: 'button[data-key="' + CSS.escape(row.key) + '"]' }); render(true); } },
          el("span", { class: "row-title" }, document.createTextNode(row.title || row.key), managedNote(row)),
          el("span", { class: "value", text: titleOf(row, value) }));
        node = button;
        break;
      }
      case "radio": {
        const nodes = row.values.map((v, i) => {
          const input = el("input", { type: "radio", name: row.key + "-" + id, value: i, "data-key": row.key, disabled: locked });
          input.checked = same(v, value);
          input.addEventListener("change", () => { if (input.checked) send(row.key, i); });
          return el("label", { class: "row choice" }, el("span", { class: "row-title", text: row.titles[i] || String(v) }), input,
                    el("span", { class: "check", "aria-hidden": "true", text: "✓" }));
        });
        node = el("div", { role: "radiogroup", "aria-label": label, "data-row": row.key }, ...nodes, managedNote(row));
        break;
      }
      case "title": {
        node = el("div", { class: "row", "data-row": row.key }, el("span", { class: "row-title", text: row.title || row.key }),
                  el("span", { class: "value", "data-key": row.key, text: titleOf(row, value) }));
        break;
      }
      case "child": {
        node = el("button", { class: "row", "data-page": row.page,
                              onclick: () => { state.stack.push({ page: row.page, opener: 'button[data-page="' + CSS.escape(row.page) + '"]' }); render(true); } },
                  el("span", { class: "row-title", text: row.title || row.page }));
        break;
      }
      default: return [];
    }
    return [node];
  }

  function renderChoices(row) {
    const value = state.doc.values[row.key];
    let order = row.values.map((v, i) => i);
    if (row.sorted) order.sort((a, b) => String(row.titles[a]).localeCompare(String(row.titles[b])));
    const items = order.map((i) => {
      const checked = same(row.values[i], value);
      return el("button", { class: "row choice", role: "menuitemradio", "aria-checked": checked ? "true" : "false", "data-key": row.key,
                            "data-index": i, onclick: async () => { if (await send(row.key, i)) { state.stack.pop(); render(true, 'button[data-key="' + CSS.escape(row.key) + '"]'); } } },
                el("span", { class: "row-title", text: row.titles[i] || String(row.values[i]) }),
                el("span", { class: "check", "aria-hidden": "true", text: "✓" }));
    });
    return [el("h2", { id: "page-title", text: row.title || row.key }),
            el("div", { class: "group", role: "menu", "aria-labelledby": "page-title", "data-row": row.key }, ...items)];
  }

  function renderFooter() {
    const reset = el("button", { class: "reset", id: "reset", onclick: confirmReset, text: "Reset to defaults" });
    // A key no row declares can be set here, keeping its type; a declared one only on its row.
    const editable = (r) => !r.declared && !isManaged(r.key) && ["string", "integer", "float", "boolean"].includes(r.type);
    const rawInput = (r) => {
      const text = r.type === "boolean" ? (r.value ? "YES" : "NO") : String(r.value);
      const input = el("input", { type: "text", class: "raw-input", "aria-label": "Value of " + r.key, "data-raw-key": r.key,
                                  spellcheck: "false", autocomplete: "off" });
      input.value = text;
      input.addEventListener("change", () => sendRaw(r.key, r.type, input));
      return input;
    };
    const rows = state.doc.raw.map((r) => el("tr", { "data-raw-row": r.key }, el("td", { text: r.key }), el("td", { text: r.type }),
                                              el("td", { class: "raw-value" }, editable(r) ? rawInput(r) : document.createTextNode(r.text)),
                                              el("td", { text: r.declared ? "declared" : isManaged(r.key) ? "managed" : "" })));
    const table = el("table", { id: "raw-table" }, el("caption", { class: "visually-hidden", text: "Every key of " + state.doc.domain }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Key" }), el("th", { scope: "col", text: "Type" }),
                                    el("th", { scope: "col", text: "Value" }), el("th", { scope: "col", text: "Settings.bundle" }))),
      el("tbody", {}, ...rows));
    const raw = el("details", { class: "raw", id: "raw" }, el("summary", { text: "Raw values of " + state.doc.domain }),
                   rows.length ? table : el("p", { class: "hint", text: "No value is stored: every row shows its default." }));
    if (state.rawOpen) raw.open = true;
    raw.addEventListener("toggle", () => { state.rawOpen = raw.open; });
    return [el("div", { class: "actions" }, reset), raw];
  }

  function confirmReset() {
    const dialog = $("#confirm");
    $("#confirm-title").textContent = "Reset every setting of " + state.doc.name + " to its default?";
    dialog.returnValue = "";
    dialog.showModal();
    $("#confirm-cancel").focus();
  }

  async function post(url, body) {
    const r = await fetch(url, { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
                                 body: JSON.stringify(body) });
    let data = {};
    try { data = await r.json(); } catch (e) { data = { error: r.statusText }; }
    return { ok: r.ok, data };
  }

  function rowNode(key) { return document.querySelector('#pane [data-row="' + CSS.escape(key) + '"]'); }

  function showReason(key, text) {
    const row = rowNode(key);
    if (!row) return;
    let reason = row.nextElementSibling && row.nextElementSibling.classList.contains("reason") ? row.nextElementSibling : null;
    if (!text) { if (reason) reason.remove(); return; }
    if (!reason) { reason = el("p", { class: "reason", role: "alert", "data-reason": key }); row.after(reason); }
    reason.textContent = text;
  }

  // Changes go on the page's WebSocket while it is open (a fetch's own work
  // in the browser is most of a change's round trip), else as a POST; the
  // server answers either after the commit. A change whose socket closes
  // before its answer is sent again as a POST (setting a value twice is harmless).
  const socket = { ws: null, next: 0, waiting: new Map() };
  const postChange = (c) => post("/api/apps/" + encodeURIComponent(c.app) + "/values", { key: c.key, value: c.value });

  function openSocket() {
    let ws;
    try { ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/socket"); } catch (e) { return; }
    let opened = false;
    ws.addEventListener("open", () => { opened = true; socket.ws = ws; document.body.dataset.socket = "1"; });
    ws.addEventListener("message", (e) => {
      let answer;
      try { answer = JSON.parse(e.data); } catch (err) { return; }
      const change = socket.waiting.get(answer.id);
      if (!change) return;
      socket.waiting.delete(answer.id);
      change.resolve({ ok: answer.status === 200, data: answer });
    });
    ws.addEventListener("close", () => {
      if (socket.ws === ws) socket.ws = null;
      delete document.body.dataset.socket;
      const waiting = [...socket.waiting.values()];
      socket.waiting.clear();
      for (const change of waiting) postChange(change).then(change.resolve);
      // Opened once (the server restarted): again; never opened (a proxy without WebSockets): POSTs from now on.
      if (opened) setTimeout(openSocket, 1000);
    });
  }

  function sendChange(change) {
    const ws = socket.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return postChange(change);
    return new Promise((resolve) => {
      const id = ++socket.next;
      socket.waiting.set(id, { ...change, resolve });
      ws.send(JSON.stringify({ id, app: change.app, key: change.key, value: change.value }));
    });
  }

  async function send(key, value) {
    const app = state.app;
    const { ok, data } = await sendChange({ app, key, value });
    if (app !== state.app) return ok;
    if (ok) {
      state.doc.values[key] = data.value;
      showReason(key, null);
      state.saved += 1;
      document.body.dataset.saved = String(state.saved);
      announce("Saved");
    } else {
      showReason(key, data.error || "Not saved");
      announce(data.error || "Not saved");
      updateValues();
    }
    return ok;
  }

  async function sendRaw(key, type, input) {
    const { ok, data } = await post("/api/apps/" + encodeURIComponent(state.app) + "/raw", { key, type, text: input.value });
    const row = document.querySelector('#raw-table [data-raw-row="' + CSS.escape(key) + '"]');
    let reason = row && row.nextElementSibling && row.nextElementSibling.classList.contains("raw-reason") ? row.nextElementSibling : null;
    if (ok) {
      if (reason) reason.remove();
      state.saved += 1;
      document.body.dataset.saved = String(state.saved);
      announce("Saved");
    } else if (row) {
      if (!reason) { reason = el("tr", { class: "raw-reason" }, el("td", { colspan: "4", class: "reason", role: "alert", "data-reason": key })); row.after(reason); }
      reason.firstChild.textContent = data.error || "Not saved";
      announce(data.error || "Not saved");
    }
  }

  // Values changed elsewhere: controls are updated in place (focus stays);
  // only those of `keys` when given.
  function updateValues(keys) {
    const doc = state.doc;
    const inputs = keys ? keys.flatMap((k) => [...document.querySelectorAll('#pane [data-key="' + CSS.escape(k) + '"]')])
                        : document.querySelectorAll("#pane [data-key]");
    for (const input of inputs) {
      const key = input.dataset.key;
      const value = doc.values[key];
      const row = findRow(key);
      if (!row) continue;
      const locked = isManaged(key);
      if (input.tagName === "INPUT") input.disabled = locked;
      if (row.kind === "toggle") input.checked = row.trueValue !== null ? same(value, row.trueValue) : value === true;
      else if (row.kind === "slider") { if (document.activeElement !== input || !input.matches(":active")) input.value = value; }
      else if (row.kind === "text") { if (document.activeElement !== input) input.value = value === null || value === undefined ? "" : String(value); }
      else if (row.kind === "radio") input.checked = same(row.values[Number(input.value)], value);
      else if (row.kind === "multi" && input.tagName === "BUTTON" && input.dataset.index === undefined) { input.querySelector(".value").textContent = titleOf(row, value); input.disabled = locked; }
      else if (row.kind === "multi") input.setAttribute("aria-checked", same(row.values[Number(input.dataset.index)], value) ? "true" : "false");
      else if (row.kind === "title") input.textContent = titleOf(row, value);
    }
    const raw = $("#raw");
    // The table is drawn again unless a value is being typed in it; its summary keeps the focus.
    if (raw && state.stack.length === 1 && !(raw.contains(document.activeElement) && document.activeElement.classList.contains("raw-input"))) {
      const hadFocus = raw.contains(document.activeElement);
      const [fresh] = renderFooter().slice(1);
      raw.replaceWith(fresh);
      if (hadFocus) fresh.querySelector("summary").focus();
    }
    document.body.dataset.refreshed = String((Number(document.body.dataset.refreshed) || 0) + 1);
  }

  function findRow(key) {
    if (!state.doc.rowsByKey) {
      state.doc.rowsByKey = new Map();
      for (const p of state.doc.pages) for (const s of p.sections) for (const r of s.rows) if (r.key && !state.doc.rowsByKey.has(r.key)) state.doc.rowsByKey.set(r.key, r);
    }
    return state.doc.rowsByKey.get(key) || null;
  }

  async function refresh(id) {
    if (id !== state.app) return;
    const doc = await getJSON("/api/apps/" + encodeURIComponent(id));
    if (id !== state.app) return;
    state.doc = doc;
    updateValues();
  }

  // A change event carries the changed keys as the page shows them; one
  // with only an id (the server could not tell what changed) reads the page again.
  function applyChange(change) {
    if (change.id !== state.app || !state.doc) return;
    if (!change.values) { refresh(change.id).catch(() => {}); return; }
    const doc = state.doc;
    const keys = Object.keys(change.values);
    for (const k of keys) doc.values[k] = change.values[k];
    const gone = new Set(change.removed.concat(change.raw.map((r) => r.key)));
    doc.raw = doc.raw.filter((r) => !gone.has(r.key)).concat(change.raw).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const managedChanged = change.managed.join("\n") !== doc.managed.join("\n");
    doc.managed = change.managed;
    updateValues(managedChanged ? undefined : keys);
  }

  function listen() {
    const events = new EventSource("/api/events");
    let opened = false;
    events.addEventListener("change", (e) => {
      let change;
      try { change = JSON.parse(e.data); } catch (err) { return; }
      applyChange(change);
    });
    events.addEventListener("open", () => {
      document.body.dataset.live = "1";
      // Opened again (the server restarted): what changed meanwhile is read again.
      if (opened && state.app) refresh(state.app).catch(() => {});
      opened = true;
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#confirm").addEventListener("close", async () => {
      if ($("#confirm").returnValue !== "reset") return;
      const { ok, data } = await post("/api/apps/" + encodeURIComponent(state.app) + "/reset", {});
      announce(ok ? "Reset to defaults" : (data.error || "Not reset"));
      await openApp(state.app, false);
      const reset = $("#reset"); if (reset) reset.focus();
    });
    loadApps().then(() => { document.body.dataset.readyAt = String(performance.now()); document.body.dataset.ready = "1"; }).catch((e) => {
      $("#pane").replaceChildren(el("p", { class: "reason", role: "alert", text: String(e.message || e) }));
    });
    listen();
    openSocket();
  });
})();
"""#
}
