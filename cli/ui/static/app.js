// dshc ui: the page's behaviour. Server JSON in, DOM out; text is always set as text, never as HTML
// (the one exception is the graph's SVG, which the server builds with every label escaped).
"use strict";

const state = {
  meta: null,
  base: { preset: "standard", host: "web", platform: "linux", scope: "root", mode: null, policy: null, plan: false },
  vary: ["preset"],
  colour: "gate",
  args: null,
  matrix: null,
  selected: null, // {tool, col}
  version: null,
  view: "matrix",
  latest: {}, // kind -> number of the newest request; an older answer arriving late is dropped
};

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function latest(kind, path, body) {
  const ticket = (state.latest[kind] || 0) + 1;
  state.latest[kind] = ticket;
  const data = await api(path, body);
  return ticket === state.latest[kind] ? data : null;
}

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || `${response.status}`);
  return data;
}

function showValue(axis, value) {
  if (axis === "plan") return value ? "plan" : "no plan";
  if (value === null) return axis === "preset" ? "(host default)" : "(declared)";
  return value;
}

// ---- axes -----------------------------------------------------------------------------------
function renderAxes() {
  const box = $("#axis-controls");
  box.replaceChildren();
  for (const axis of state.meta.axes) {
    const values = state.meta.values[axis];
    if (!values.some((v) => JSON.stringify(v) === JSON.stringify(state.base[axis]))) state.base[axis] = values[0];
    const select = el("select", { id: `axis-${axis}`, "aria-label": `${axis} value`, disabled: state.vary.includes(axis),
      onchange: (e) => { state.base[axis] = JSON.parse(e.target.value); unselect(); refresh(); } },
      values.map((v) => el("option", { value: JSON.stringify(v), selected: JSON.stringify(v) === JSON.stringify(state.base[axis]), text: showValue(axis, v) })));
    const check = el("input", { type: "checkbox", id: `vary-${axis}`, checked: state.vary.includes(axis),
      onchange: (e) => {
        state.vary = e.target.checked ? [...state.vary, axis] : state.vary.filter((a) => a !== axis);
        select.disabled = e.target.checked;
        unselect();
        refresh();
      } });
    box.append(el("span", { class: "axis" }, check, el("label", { for: `vary-${axis}`, text: axis }), select));
  }
  const classes = $("#arg-class");
  classes.replaceChildren(el("option", { value: "{}", text: "{} — a call with no arguments" }),
    ...state.meta.classes.filter((c) => Object.keys(c.args).length).map((c) =>
      el("option", { value: JSON.stringify(c.args), text: `${JSON.stringify(c.args)} — ${c.tools.slice(0, 3).join(", ")}${c.tools.length > 3 ? "…" : ""}` })));
}

// ---- matrix ---------------------------------------------------------------------------------
const DECISION_CLASS = { allow: "d-allow", ask: "d-ask", deny: "d-deny", conditional: "d-conditional" };

function cellClass(cell) {
  if (cell === null) return "";
  if (state.colour === "decision") return DECISION_CLASS[cell.decision] || "";
  if (cell.label === "sdk") return "g-sdk";
  if (cell.gate === null && cell.policy === "conditional") return "d-conditional";
  return cell.gate === null ? "g-on" : `g-${cell.gate}`;
}

async function loadMatrix() {
  const data = await latest("matrix", "/api/matrix", { base: state.base, vary: state.vary, colour: state.colour, args: state.args });
  if (data === null) return;
  state.matrix = data;
  renderMatrix();
}

function renderMatrix() {
  const data = state.matrix;
  const table = $("#matrix");
  const head = el("thead", {},
    el("tr", {}, el("th", { class: "tool", scope: "col", text: "tool" }),
      data.columns.map((c, i) => el("th", { scope: "col", "data-col": i, "data-col-label": c.label, text: c.label }))),
    el("tr", {}, el("th", { class: "tool", text: "fingerprint" }),
      data.columns.map((c) => el("th", { class: "fp", title: c.fingerprint || "", text: c.fingerprint ? c.fingerprint.slice(7, 19) : "—" }))),
    el("tr", {}, el("th", { class: "tool", text: "counts" }),
      data.columns.map((c, i) => c.error
        ? el("th", { class: "col-error", title: c.error, text: c.error.split("\n")[0].replace(/^.*?(error\[)/, "$1") })
        : el("th", { "data-count-col": i, "data-wire": c.counts["on the wire"] },
            Object.entries(c.counts).map(([k, v]) => el("div", { text: `${v} ${k}` }))))));
  const body = el("tbody", {}, data.tools.map((tool, r) =>
    el("tr", {}, el("th", { class: "tool", scope: "row", text: tool }),
      data.cells[tool].map((cell, c) => el("td", {
        role: "gridcell", class: cellClass(cell), tabindex: -1, "data-tool": tool, "data-col": c, "data-row": r,
        "data-gate": cell ? String(cell.gate) : "error", "data-wire": cell ? String(cell.wire) : "false",
        "aria-selected": state.selected && state.selected.tool === tool && state.selected.col === c ? "true" : "false",
        text: cell ? cell.label : "—",
      })))));
  table.replaceChildren(head, body);
  const start = table.querySelector('td[aria-selected="true"]') || table.querySelector("td");
  if (start) start.tabIndex = 0;
  $("#legend").replaceChildren(...(state.colour === "decision"
    ? ["allow", "ask", "deny"].map((d) => el("span", { class: DECISION_CLASS[d], text: d })).concat([" @gate: a gate stopped the call before the policy"])
    : [["g-on", "on: on the wire, allowed"], ["d-conditional", "on · conditional: the policy decides call by call"], ["g-allowed", "on · deny: listed, the policy denies"], ["g-ready", "on · n/a: listed, provider absent"],
       ["g-registered", "✗ reg: not registered"], ["g-visible", "✗ vis: hidden by the scope"], ["g-projected", "✗ proj: not on the wire in this mode"],
       ["g-sdk", "sdk: behind run_code"]].map(([cls, text]) => el("span", { class: cls, text }))));
}

function moveFocus(cell, dr, dc) {
  const r = Number(cell.dataset.row) + dr, c = Number(cell.dataset.col) + dc;
  const next = document.querySelector(`#matrix td[data-row="${r}"][data-col="${c}"]`);
  if (next) { cell.tabIndex = -1; next.tabIndex = 0; next.focus(); }
}

function onMatrixKey(event) {
  const cell = event.target.closest("td");
  if (!cell) return;
  const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  if (moves[event.key]) { event.preventDefault(); moveFocus(cell, ...moves[event.key]); }
  else if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(cell); }
}

function unselect() {
  state.selected = null;
  $("#explain").replaceChildren(el("p", { class: "hint", text: "Select a cell (click, or arrow keys then Enter) to see why." }));
}

function select(cell) {
  document.querySelectorAll('#matrix td[aria-selected="true"]').forEach((c) => c.setAttribute("aria-selected", "false"));
  cell.setAttribute("aria-selected", "true");
  document.querySelectorAll("#matrix td[tabindex='0']").forEach((c) => { c.tabIndex = -1; });
  cell.tabIndex = 0;
  state.selected = { tool: cell.dataset.tool, col: Number(cell.dataset.col) };
  loadExplain().catch(showFailure);
}

// ---- explain --------------------------------------------------------------------------------
function excerptNode(ex) {
  if (!ex) return null;
  return el("div", { class: "excerpt", role: "group", "aria-label": `source ${ex.path}:${ex.line}` },
    el("div", { class: "path", text: `${ex.path}:${ex.line}${ex.col ? ":" + ex.col : ""}` }),
    ex.lines.map((l) => el("code", { class: l.hl ? "ln hl" : "ln", "data-line": l.n, text: `${String(l.n).padStart(4)} | ${l.text}` })));
}

async function loadExplain() {
  if (!state.selected || !state.matrix) return;
  const column = state.matrix.columns[state.selected.col];
  if (!column || !state.matrix.cells[state.selected.tool]) return;
  if (column.error) {
    $("#explain").replaceChildren(el("h2", { id: "explain-title", text: `${column.label}: this context does not compose` }),
      el("pre", { class: "excerpt", text: column.error }));
    return;
  }
  const data = await latest("explain", "/api/explain", { context: column.context, tool: state.selected.tool, args: state.colour === "decision" ? (state.args || {}) : null });
  if (data === null) return;
  const panel = $("#explain");
  const headline = data.available ? `\`${data.tool}\` is available` : `\`${data.tool}\` is not available: gate \`${data.failed_gate}\` fails`;
  const gates = el("table", { class: "gates", "aria-label": "gate trace" },
    el("thead", {}, el("tr", {}, el("th", { text: "gate" }), el("th", { text: "status" }), el("th", { text: "why" }))),
    el("tbody", {}, data.gates.map((g) => el("tr", { "data-gate": g.gate, "data-status": g.status },
      el("td", { text: g.gate }), el("td", { class: `st-${g.status}`, text: g.status.replace("-", " ") }),
      el("td", {}, g.reason, g.source && g.status !== "not-reached" ? el("div", { class: "mono", text: `at ${g.source}` }) : null)))));
  const parts = [el("h2", { id: "explain-title", text: headline }), el("p", { class: "hint", text: column.label })];
  if (data.deciding && data.deciding.fix) parts.push(el("p", { class: "fix" }, el("strong", { text: "Fix: " }), data.deciding.fix));
  parts.push(gates);
  if (data.deciding) {
    parts.push(el("h3", { text: `Deciding declaration (gate ${data.deciding.gate})` }), excerptNode(data.deciding.excerpt) || el("p", { text: "no source: a built-in default" }));
  }
  if (data.decision) {
    parts.push(el("h3", { text: `Decision for ${JSON.stringify(data.decision.args)}` }),
      el("p", { class: "decision", "data-effect": data.decision.effect }, el("strong", { text: data.decision.effect }), `: ${data.decision.reason}`),
      data.decision.rules.map((r) => el("div", {}, el("div", { class: "mono", text: `${r.rule}${r.source ? " at " + r.source : ""}` }), excerptNode(r.excerpt))));
  }
  if (data.enforcement && data.enforcement.length) {
    parts.push(el("h3", { text: "What holds the policy for the processes it starts" }),
      el("table", { class: "gates enforcement", "aria-label": "enforcement map" },
        el("thead", {}, el("tr", {}, el("th", { text: "layer" }), el("th", { text: "rule" }), el("th", { text: "not stopped" }))),
        el("tbody", {}, data.enforcement.map((r) => el("tr", { "data-layer": r.layer },
          el("td", { text: r.layer }), el("td", {}, `${r.rule}: ${r.concerns}`, el("div", { class: "hint", text: r.how })),
          el("td", { class: "mono", text: r.witness || "—" }))))));
  }
  panel.replaceChildren(...parts);
  panel.setAttribute("aria-labelledby", "explain-title");
}

// ---- diff -----------------------------------------------------------------------------------
function sideNode(title, side) {
  return el("div", { class: "side" }, el("h3", { text: title }),
    side ? [el("div", { text: side.reason }), side.source ? el("div", { class: "mono", text: side.source }) : null] : el("div", { class: "hint", text: "—" }));
}

async function loadDiff(event) {
  if (event) event.preventDefault();
  const out = $("#diff-result");
  out.replaceChildren(el("p", { class: "hint", text: "comparing…" }));
  const body = { old: $("#diff-old").value, new: $("#diff-new").value };
  if ($("#diff-only").checked) body.only = state.base;
  let data;
  try { data = await api("/api/diff", body); } catch (error) { out.replaceChildren(el("pre", { class: "errors", text: error.message })); return; }
  const widenings = data.changes.filter((c) => c.widening).length;
  out.replaceChildren(
    el("p", { class: "summary", "data-widening": String(data.widening) },
      `${data.changes.length} change(s), ${widenings} widening(s) over ${data.cells_compared} cell(s); fingerprint changed in ${data.fingerprints_changed}`),
    ...data.changes.map((c) => el("article", { class: c.widening ? "change widening" : "change", "data-tool": c.tool || "", "data-kind": c.kind },
      el("header", {}, el("span", { class: "badge", text: c.widening ? "WIDENS ▲" : "narrows or changes ▽" }),
        el("strong", { text: c.tool || "(context)" }), ` ${c.kind}: ${c.detail}${c.policy ? ` under policy ${c.policy}` : ""}`),
      sideNode(`old: ${data.old}`, c.old), sideNode(`new: ${data.new}`, c.new),
      el("div", { class: "witness" }, c.witness_text ? el("span", { class: "mono", text: `witness: ${c.witness_text}` }) : null,
        ` — ${c.cells_total} cell(s)`))));
}

// ---- graph ----------------------------------------------------------------------------------
async function loadGraph() {
  const data = await latest("graph", "/api/graph", { context: state.base });
  if (data === null) return;
  const box = $("#graph");
  box.innerHTML = data.svg; // built on the server with every label escaped
  box.setAttribute("aria-label", data.title);
  $("#cuts").replaceChildren(...data.cuts.map((c) => el("li", {}, el("span", { text: "✂ " }), `${c.from} → ${c.to}: ${c.why}`)));
}

// ---- views, live updates --------------------------------------------------------------------
function showView(name, focus = false) {
  state.view = name;
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const on = tab.id === `tab-${name}`;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    if (on && focus) tab.focus();
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !on;
  }
  refresh();
}

function showFailure(error) {
  $("#live").textContent = `error: ${error.message.split("\n")[0]}`;
  $("#live").classList.add("error");
}

async function refresh() {
  document.body.dataset.busy = "true";
  try {
    if (state.view === "matrix") { await loadMatrix(); await loadExplain(); }
    else if (state.view === "graph") await loadGraph();
  } catch (error) {
    showFailure(error);
  } finally {
    document.body.dataset.busy = "false";
    document.body.dataset.version = String(state.version);
  }
}

function onState(live) {
  const changed = state.version !== null && live.version !== state.version;
  state.version = live.version;
  const banner = $("#errors");
  banner.hidden = !live.error;
  $("#error-text").textContent = live.error || "";
  $("#stale-note").textContent = live.stale ? "(showing the last version that loaded)" : "";
  const indicator = $("#live");
  indicator.classList.toggle("error", Boolean(live.error));
  indicator.textContent = (live.error ? "✗ error · " : "● live · ") + `version ${live.version}` +
    (live.watched.length ? ` · watching ${live.watched.length} path(s)` : " · nothing watched");
  if (changed) reloadMeta().then(refresh).catch(showFailure);
  else document.body.dataset.version = String(state.version);
}

async function reloadMeta() {
  const meta = await api("/api/meta");
  state.meta = meta;
  renderAxes();
}

function wire() {
  $("#matrix").addEventListener("click", (e) => { const cell = e.target.closest("td"); if (cell) select(cell); });
  $("#matrix").addEventListener("keydown", onMatrixKey);
  for (const radio of document.querySelectorAll('input[name="colour"]')) {
    radio.addEventListener("change", (e) => {
      state.colour = e.target.value;
      $("#arg-class").disabled = state.colour !== "decision";
      state.args = state.colour === "decision" ? JSON.parse($("#arg-class").value || "{}") : null;
      refresh();
    });
  }
  $("#arg-class").addEventListener("change", (e) => { state.args = JSON.parse(e.target.value); refresh(); });
  $("#diff-form").addEventListener("submit", loadDiff);
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener("click", () => showView(tab.id.slice(4)));
    tab.addEventListener("keydown", (e) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (step) { const i = (tabs.indexOf(tab) + step + tabs.length) % tabs.length; showView(tabs[i].id.slice(4), true); }
    });
  }
}

async function start() {
  wire();
  try {
    const meta = await api("/api/meta");
    state.meta = meta;
    state.version = meta.state.version;
    renderAxes();
    onState(meta.state);
    await refresh();
  } catch (error) {
    showFailure(error);
    const live = await api("/api/state");
    onState(live);
  }
  const events = new EventSource("/api/events");
  events.addEventListener("state", (e) => onState(JSON.parse(e.data)));
  events.addEventListener("error", () => { $("#live").textContent = "○ disconnected (retrying)"; });
}

start();
