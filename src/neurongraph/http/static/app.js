// Neuron Graph RAG web page: plain JavaScript, no build step, no external requests.
// Every text from the store is set with textContent (never parsed as HTML).
"use strict";

const STAGES = ["retrieved", "selected", "validated", "used"];
const OUTCOMES = ["confirmed", "corrected", "rolled_back", "superseded"];
const SVGNS = "http://www.w3.org/2000/svg";
const state = { trace: null, hits: [], stages: {}, changed: new Map(), tokenRequired: false };

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) n.append(c instanceof Node ? c : String(c));
  return n;
}

function svg(tag, attrs = {}, text) {
  const n = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (text !== undefined) n.textContent = text;
  return n;
}

const fmt = (x, d = 3) => (typeof x === "number" ? x.toFixed(d) : "–");
const short = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
// an edge of a drawn path is written in walk order; feedback names the stored edge, which may point
// the other way: both directions of one relation share a key
const edgeKey = (e) => [e.src, e.dst].sort().join("\u0000") + "\u0000" + e.rel;
const fill = (node, ...kids) => node.replaceChildren(...kids.filter((k) => k !== null && k !== undefined && k !== false));

// ------------------------------------------------------------------ API
class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || { code: "http_" + status, message: "request failed" };
    super(e.message);
    this.code = e.code;
    this.hint = e.hint;
    this.status = status;
  }
}

async function api(path, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = sessionStorage.getItem("ngr-token");
  if (token) headers.Authorization = "Bearer " + token;  // reads need it too unless --public-reads
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch (_) { /* an empty or non-JSON body */ }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

function showError(err) {
  const box = $("error");
  box.replaceChildren();
  if (!err) { box.hidden = true; return; }
  const code = err.code || "error";
  box.append(el("code", { text: `error[${code}]` }), ": " + err.message);
  if (err.hint) box.append(el("div", { class: "small", text: err.hint }));
  if (code === "unauthorized") { $("token-form").hidden = false; $("token").focus(); }
  box.hidden = false;
}

// ------------------------------------------------------------------ header
async function loadStats() {
  try {
    const [h, s] = await Promise.all([api("/api/health"), api("/api/stats")]);
    state.tokenRequired = h.token_required;
    $("token-form").hidden = !h.token_required;
    const box = $("store-stats");
    fill(box,
      el("b", { text: s.nodes.toLocaleString() }), " nodes · ",
      el("b", { text: s.edges.toLocaleString() }), " edges · ",
      el("b", { text: s.traces.toLocaleString() }), " traces",
      s.embedder ? el("span", { class: "muted", text: ` · ${s.embedder}` }) : null,
    );
  } catch (e) { showError(e); }
}

// ------------------------------------------------------------------ search
function splitList(v) { return v.split(",").map((s) => s.trim()).filter(Boolean); }

function parseWhere(v) {
  const out = {};
  for (const part of splitList(v)) {
    const i = part.indexOf("=");
    if (i < 1) throw new ApiError(400, { error: { code: "invalid_argument", message: `metadata filter ${JSON.stringify(part)}: expected KEY=VALUE` } });
    const key = part.slice(0, i).trim(); const raw = part.slice(i + 1).trim();
    let val = raw;
    try { const j = JSON.parse(raw); if (["number", "boolean", "string"].includes(typeof j)) val = j; } catch (_) { /* text */ }
    out[key] = val;
  }
  return out;
}

function timeValue(v) {
  const t = v.trim();
  if (!t) return undefined;
  return /^-?\d+(\.\d+)?$/.test(t) ? Number(t) : t;
}

function searchBody() {
  const body = { query: $("q").value.trim(), limit: Number($("opt-limit").value || 10) };
  const channel = $("opt-strategy").value; if (channel) body.channel = channel;
  for (const [id, key] of [["opt-types", "types"], ["opt-rels", "rels"], ["opt-sources", "sources"], ["opt-files", "files"]]) {
    const list = splitList($(id).value); if (list.length) body[key] = list;
  }
  for (const [id, key] of [["opt-as-of", "as_of"], ["opt-since", "since"], ["opt-until", "until"]]) {
    const t = timeValue($(id).value); if (t !== undefined) body[key] = t;
  }
  const where = parseWhere($("opt-where").value); if (Object.keys(where).length) body.where = where;
  return body;
}

function setBusy(on, text) {
  $("progress").hidden = !on;
  $("search-btn").disabled = on;
  if (text) $("progress-text").textContent = text;
  document.body.setAttribute("aria-busy", on ? "true" : "false");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Start a background job and poll it: the page shows the phase, queue position and elapsed time.
async function runJob(path, body) {
  let job = await api(path, { method: "POST", body });
  let wait = 120;
  while (job.state === "queued" || job.state === "running") {
    $("progress-text").textContent = job.phase.charAt(0).toUpperCase() + job.phase.slice(1) + "…";
    $("progress-time").textContent = (job.elapsed_ms / 1000).toFixed(1) + " s";
    await sleep(wait);
    wait = Math.min(wait * 1.5, 800);
    job = await api("/api/jobs/" + encodeURIComponent(job.job_id));
  }
  if (job.state === "error") throw new ApiError(0, { error: job.error });
  return job.result;
}

async function doSearch(ev) {
  if (ev) ev.preventDefault();
  showError(null);
  let body;
  try { body = searchBody(); } catch (e) { showError(e); return; }
  if (!body.query) return;
  setBusy(true, "Starting the search…");
  $("progress-time").textContent = "";
  try {
    const res = await runJob("/api/search/jobs", body);
    state.trace = res.trace_id; state.hits = res.hits; state.stages = {}; state.changed = new Map(); state.changesFor = {}; state.outcomes = {};
    renderResults(res);
    loadHistory();
    loadStats();
  } catch (e) { showError(e); } finally { setBusy(false); }
}

function renderResults(res) {
  $("result-head").hidden = false;
  $("result-count").textContent = `${res.hits.length} hit${res.hits.length === 1 ? "" : "s"} for “${short(res.query, 80)}”`;
  $("result-trace").textContent = res.trace_id;
  const t = res.timings_ms || {};
  const total = Object.values(t).reduce((a, b) => a + b, 0);
  $("result-timing").textContent = `${total.toFixed(0)} ms · seeds: ${(res.seeds || []).join(", ") || "–"}`
    + (res.unknown_files && res.unknown_files.length ? ` · no file node for ${res.unknown_files.join(", ")}` : "");
  const list = $("hits");
  list.replaceChildren(...res.hits.map((h, i) => renderHit(h, i + 1)));
  if (!res.hits.length) list.append(el("li", { class: "hit muted", text: "No hits. Try other words or fewer filters." }));
  $("failure-box").hidden = false;
  $("failure-done").hidden = true;
}

function renderHit(h, rank) {
  const li = el("li", { class: "hit", "data-testid": "hit", "data-id": h.id });
  const stage = state.stages[h.id] || "retrieved";
  li.append(el("div", { class: "hit-head" },
    el("span", { class: "rank", text: rank + "." }),
    el("button", { class: "link hit-title", type: "button", "data-testid": "hit-title", text: h.title || h.id, onclick: () => openNode(h.id) }),
    el("span", { class: "badge", "data-testid": "hit-type", text: h.type }),
    h.seed ? el("span", { class: "badge seed", text: "seed" }) : null,
    el("span", { class: `badge stage-${stage}`, "data-testid": "hit-stage", text: stage }),
  ));
  li.append(el("div", { class: "hit-id", text: h.id }));
  li.append(el("p", { class: "snippet", "data-testid": "snippet", text: h.text }));
  const scores = el("ul", { class: "scores", "data-testid": "scores" });
  const order = ["final", "entry", "lexical", "dense", "graph", "priming"];
  const names = Object.keys(h.scores).sort((a, b) => (order.indexOf(a) + 99) % 99 - (order.indexOf(b) + 99) % 99);
  for (const k of names) scores.append(el("li", { class: k === "final" ? "final" : "", title: rankTitle(h, k), text: `${k} ${fmt(h.scores[k])}` }));
  li.append(scores);
  li.append(pathGraph(h));
  li.append(el("p", { class: "explain", text: explainText(h) }));
  li.append(actions(h));
  return li;
}

function rankTitle(h, k) {
  const r = h.ranks && h.ranks[k];
  return r ? `${k}: rank ${r}` : k;
}

function explainText(h) {
  if (h.paths && h.paths.length && h.paths[0].edges.length) {
    const p = h.paths[0];
    return `${p.edges.length} hop${p.edges.length > 1 ? "s" : ""} from seed ${p.nodes[0]} (path score ${fmt(p.score)})`;
  }
  return h.seed ? "A seed: entered by lexical/dense retrieval; the graph spreads from here."
    : "Reached by entry retrieval only (no graph path).";
}

// The explanation path as a small graph: seed → typed, weighted edges → hit.
function pathGraph(h) {
  const path = (h.paths && h.paths[0]) || { nodes: [h.id], edges: [] };
  const nodes = path.nodes.length ? path.nodes : [h.id];
  const W = 640, pad = 70;
  const H = nodes.length > 1 ? 92 : 66;  // a hit without a path: one node, less room
  const step = nodes.length > 1 ? (W - 2 * pad) / (nodes.length - 1) : 0;
  const x = (i) => (nodes.length > 1 ? pad + i * step : W / 2);
  const y = nodes.length > 1 ? 44 : 18;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "graph", role: "img", "data-testid": "path-graph",
    "aria-label": `explanation path: ${nodes.join(" → ")}` });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "9", markerHeight: "9",
    markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#8a93a6" }));
  defs.append(marker); g.append(defs);
  path.edges.forEach((e, i) => {
    const changed = state.changed.get(edgeKey(e));
    const forward = e.src === nodes[i];
    const x1 = x(i) + 13, x2 = x(i + 1) - 13;
    const line = svg("line", { x1: forward ? x1 : x2, y1: y, x2: forward ? x2 : x1, y2: y,
      stroke: "#8a93a6", "stroke-width": String(1 + Math.min(5, 4 * e.weight)), "marker-end": "url(#arrow)",
      class: changed ? "changed" : "", "data-edge": edgeKey(e) });
    line.append(svg("title", {}, changed
      ? `stored edge ${changed.src} -[${e.rel}]-> ${changed.dst}: weight ${fmt(changed.old_weight)} → ${fmt(changed.new_weight)}`
      : `${e.src} -[${e.rel}]-> ${e.dst}  weight ${fmt(e.weight)} along this path`));
    g.append(line);
    g.append(svg("text", { x: (x(i) + x(i + 1)) / 2, y: y - 12, "text-anchor": "middle",
      class: "edge-label" + (changed ? " changed" : ""), "data-testid": "edge-label" },
      changed ? `${e.rel} · ${fmt(changed.first_weight, 2)} → ${fmt(changed.new_weight, 2)}` : `${e.rel} · w ${fmt(e.weight, 2)}`));
  });
  nodes.forEach((id, i) => {
    const isHit = i === nodes.length - 1;
    const isSeed = i === 0 && (nodes.length > 1 || h.seed);
    const c = svg("circle", { cx: x(i), cy: y, r: 11, fill: isHit ? "#2f5bea" : isSeed ? "#0f8a6a" : "#fff",
      stroke: isHit ? "#2f5bea" : isSeed ? "#0f8a6a" : "#8a93a6", "stroke-width": 2 });
    c.append(svg("title", {}, id));
    g.append(c);
    g.append(svg("text", { x: x(i), y: y + 28, "text-anchor": "middle", class: "node-label" }, short(id, 26)));
    g.append(svg("text", { x: x(i), y: y + 41, "text-anchor": "middle", class: "node-type" },
      isHit ? (isSeed ? "seed · hit" : "hit") : isSeed ? "seed" : "via"));
  });
  return g;
}

// ------------------------------------------------------------------ feedback
function newKey() {
  return (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2));
}

function actions(h) {
  const box = el("div", { class: "actions-box" });
  const stage = state.stages[h.id] || "retrieved";
  const at = STAGES.indexOf(stage);
  const walk = el("div", { class: "walk", role: "group", "aria-label": "source use" });
  for (const s of STAGES.slice(1)) {
    const i = STAGES.indexOf(s);
    walk.append(el("button", { type: "button", "data-testid": `mark-${s}`, class: i <= at ? "done" : "",
      disabled: i <= at || undefined, text: i <= at ? `✓ ${s}` : s, title: `walk this hit up to ${s}`,
      onclick: () => walkTo(h, s) }));
  }
  box.append(el("div", { class: "actions" }, walk,
    el("button", { type: "button", class: "link small", text: "open node", onclick: () => openNode(h.id) })));
  const changes = state.changesFor && state.changesFor[h.id];
  if (changes) box.append(changes);
  if (stage === "used") box.append(outcomeForm(h));
  return box;
}

async function walkTo(h, target) {
  showError(null);
  const from = STAGES.indexOf(state.stages[h.id] || "retrieved");
  const to = STAGES.indexOf(target);
  const events = STAGES.slice(from + 1, to + 1).map((stage) => ({ node_id: h.id, stage }));
  if (!events.length) return;
  try {
    const receipt = await api("/api/source-use", { method: "POST",
      body: { trace_id: state.trace, events, idempotency_key: newKey() } });
    for (const t of receipt.transitions) state.stages[t.node_id] = t.to;
    state.changesFor = state.changesFor || {};
    state.changesFor[h.id] = changeList(receipt);
    applyChanges(receipt.edges_changed);
    rerender();
    loadStats();
  } catch (e) { showError(e); }
}

function changeList(receipt) {
  const wrap = el("div", { class: "changes", "data-testid": "weight-changes" });
  if (receipt.edges_changed.length) {
    wrap.append(el("strong", { text: `${receipt.edges_changed.length} edge weight${receipt.edges_changed.length > 1 ? "s" : ""} changed` }));
    const ul = el("ul");
    for (const c of receipt.edges_changed) {
      ul.append(el("li", { "data-testid": "weight-change" },
        el("span", { class: "mono", text: `${c.src} -[${c.rel}]-> ${c.dst}` }), ": ",
        el("span", { class: "w-old", text: fmt(c.old_weight) }), " → ",
        el("span", { class: "w-new", text: fmt(c.new_weight) }),
        el("span", { class: "muted small", text: ` (${c.kind})` })));
    }
    wrap.append(ul);
  } else if (receipt.newly_used.length) {
    wrap.append("Used. No edge changed: this hit was an entry seed, so no graph path led to it.");
  } else {
    wrap.append(`Recorded: ${receipt.transitions.map((t) => `${t.from} → ${t.to}`).join(", ") || "no change"}.`);
  }
  return wrap;
}

// Changed stored weights are drawn on every path that shows the edge (old → new, highlighted).
function applyChanges(changes) {
  for (const c of changes) {
    const prev = state.changed.get(edgeKey(c));
    state.changed.set(edgeKey(c), { ...c, first_weight: prev ? prev.first_weight : c.old_weight });
  }
}

function rerender() {
  const list = $("hits");
  list.replaceChildren(...state.hits.map((h, i) => renderHit(h, i + 1)));
}

function outcomeForm(h) {
  const sel = el("select", { "aria-label": "outcome", "data-testid": "outcome-kind" }, ...OUTCOMES.map((o) => el("option", { value: o, text: o })));
  const summary = el("input", { placeholder: "What happened (merged, reverted, …)", maxlength: "4000", "data-testid": "outcome-summary" });
  const done = el("span", { class: "ok small", "data-testid": "outcome-done", text: (state.outcomes || {})[h.id] || "" });
  const btn = el("button", { type: "button", text: "Record outcome", "data-testid": "outcome-button", onclick: async () => {
    showError(null);
    try {
      const r = await api("/api/outcome", { method: "POST", body: { trace_id: state.trace, node_ids: [h.id],
        outcome: sel.value, summary: summary.value.trim() || sel.value } });
      state.outcomes = state.outcomes || {};
      state.outcomes[h.id] = `outcome #${r.outcome_id} ${r.outcome} recorded (effect: ${r.effect || "none"}; ` +
        `${r.edges_changed.length} weight change${r.edges_changed.length === 1 ? "" : "s"})`;
      applyChanges(r.edges_changed);
      rerender();
    } catch (e) { showError(e); }
  } });
  return el("div", { class: "outcome" }, sel, summary, btn, done);
}

async function recordFailure() {
  showError(null);
  const reason = $("failure-reason").value.trim();
  if (!reason) { $("failure-reason").focus(); return; }
  try {
    const r = await api("/api/retrieval-failure", { method: "POST", body: { trace_id: state.trace, reason } });
    $("failure-done").textContent = `recorded as failure #${r.failure_id}; no weight changed`;
    $("failure-done").hidden = false;
  } catch (e) { showError(e); }
}

// ------------------------------------------------------------------ side panels
function selectTab(name) {
  for (const t of ["node", "trace", "history"]) {
    $("tab-" + t).setAttribute("aria-selected", String(t === name));
    $("panel-" + t).hidden = t !== name;
  }
}

function kvTable(obj) {
  const t = el("table", { class: "kv" });
  for (const [k, v] of Object.entries(obj)) {
    t.append(el("tr", {}, el("td", { text: k }), el("td", { text: typeof v === "string" ? v : JSON.stringify(v) })));
  }
  return t;
}

async function openNode(id) {
  showError(null);
  selectTab("node");
  const panel = $("panel-node");
  panel.replaceChildren(el("p", { class: "muted", text: "Loading " + id + "…" }));
  try {
    const q = "?id=" + encodeURIComponent(id);
    const [n, nb] = await Promise.all([api("/api/node" + q), api("/api/neighbours" + q + "&limit=100")]);
    const list = el("ul", { class: "nb", "data-testid": "neighbours" });
    for (const r of nb.neighbours) {
      list.append(el("li", { "data-testid": "neighbour" },
        el("span", { class: "rel", text: r.direction === "out" ? `→ ${r.rel}` : `← ${r.rel}` }),
        el("button", { type: "button", class: "link", text: r.node, onclick: () => openNode(r.node) }),
        r.type ? el("span", { class: "badge", text: r.type }) : null,
        el("span", { class: "w", "data-testid": "neighbour-weight", title: `base ${fmt(r.weight)} + learned ${fmt(r.plastic || 0)}`,
          text: "w " + fmt(r.weight + (r.plastic || 0), 2) + (r.plastic ? " (learned +" + fmt(r.plastic, 2) + ")" : "") })));
    }
    if (!nb.neighbours.length) list.append(el("li", { class: "muted", text: "No edges." }));
    fill(panel,
      el("h2", { "data-testid": "node-title", text: n.title || n.id }),
      el("div", {}, el("span", { class: "badge", text: n.type }), " ", el("span", { class: "hit-id", text: n.id })),
      el("p", { class: "node-text", "data-testid": "node-text", text: n.text }),
      Object.keys(n.metadata || {}).length ? el("h3", { text: "Metadata" }) : null,
      Object.keys(n.metadata || {}).length ? kvTable(n.metadata) : null,
      el("h3", { text: `Neighbours (${nb.neighbours.length})` }),
      list,
    );
  } catch (e) {
    panel.replaceChildren(el("p", { class: "muted", text: "Could not open this node." }));
    showError(e);
  }
}

async function openTrace(id) {
  showError(null);
  selectTab("trace");
  const panel = $("panel-trace");
  panel.replaceChildren(el("p", { class: "muted", text: "Loading trace…" }));
  try {
    const t = await api("/api/traces/" + encodeURIComponent(id));
    const hits = el("ul", { class: "trace-hits" });
    for (const h of t.hits) {
      hits.append(el("li", { "data-testid": "trace-hit" },
        el("span", { class: "rank", text: (h.rank || "·") + "." }),
        el("button", { type: "button", class: "link", text: h.title || h.id, onclick: () => openNode(h.id) }),
        el("span", { class: `badge stage-${h.stage}`, "data-testid": "trace-stage", text: h.stage })));
    }
    const changes = el("ul", { class: "wc", "data-testid": "trace-weight-changes" });
    for (const c of t.weight_changes) {
      changes.append(el("li", {}, el("span", { class: "mono", text: `${c.src || c.eid} -[${c.rel || "?"}]-> ${c.dst || ""}` }),
        `: ${fmt(c.old_weight)} → `, el("b", { text: fmt(c.new_weight) }), el("span", { class: "muted", text: ` (${c.kind}, for ${c.node_id})` })));
    }
    const created = new Date(t.created_at * 1000);
    fill(panel,
      el("h2", { "data-testid": "trace-query", text: t.query }),
      el("div", { class: "muted small" }, el("span", { class: "mono", "data-testid": "trace-id", text: t.trace_id }), " · " + created.toLocaleString()),
      el("h3", { text: `Hits (${t.hits.length})` }), hits,
      el("h3", { text: `Source-use reports (${t.receipts.length})` }),
      t.receipts.length ? el("ul", { class: "wc" }, ...t.receipts.map((r) => el("li", { text:
        (r.transitions || []).map((x) => `${x.node_id}: ${x.from} → ${x.to}`).join("; ") || "no change" }))) : el("p", { class: "muted small", text: "None yet." }),
      el("h3", { text: `Weight changes (${t.weight_changes.length})` }),
      t.weight_changes.length ? changes : el("p", { class: "muted small", text: "None: only sources marked used change weights." }),
      el("h3", { text: `Outcomes (${t.outcomes.length}) · failures (${t.failures.length})` }),
      el("ul", { class: "wc" }, ...t.outcomes.map((o) => el("li", { text: `${o.outcome}: ${o.summary || ""}` })),
        ...t.failures.map((f) => el("li", { text: `retrieval failure: ${f.reason}` }))),
    );
  } catch (e) {
    panel.replaceChildren(el("p", { class: "muted", text: "Could not open this trace." }));
    showError(e);
  }
}

async function loadHistory() {
  try {
    const items = await api("/api/traces?limit=50");
    const ul = $("history");
    ul.replaceChildren(...items.map((t) => el("li", { "data-testid": "history-item" },
      el("button", { type: "button", class: "link", text: t.query, onclick: () => openTrace(t.trace_id) }),
      el("div", { class: "muted small", text: `${t.kind} · ${t.hits} hits · ${new Date(t.created_at * 1000).toLocaleTimeString()}` }))));
    if (!items.length) ul.append(el("li", { class: "muted small", text: "No searches yet." }));
  } catch (e) { showError(e); }
}

// ------------------------------------------------------------------ wiring
document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", doSearch);
  $("token-form").addEventListener("submit", (e) => e.preventDefault());
  $("token").value = sessionStorage.getItem("ngr-token") || "";
  $("token").addEventListener("input", () => sessionStorage.setItem("ngr-token", $("token").value.trim()));
  $("result-trace").addEventListener("click", () => state.trace && openTrace(state.trace));
  $("failure-btn").addEventListener("click", recordFailure);
  $("tab-node").addEventListener("click", () => selectTab("node"));
  $("tab-trace").addEventListener("click", () => { selectTab("trace"); if (state.trace) openTrace(state.trace); });
  $("tab-history").addEventListener("click", () => { selectTab("history"); loadHistory(); });
  $("open-trace").addEventListener("submit", (e) => { e.preventDefault(); const v = $("open-trace-id").value.trim(); if (v) openTrace(v); });
  loadStats();
  loadHistory();
  // A link to /?q=... fills the box but does not search: every search stores a trace, so any site's
  // link would otherwise write its text into this store's history. The user presses Search.
  const q = new URLSearchParams(location.search).get("q");
  if (q) { $("q").value = q; $("q").focus(); }
});
