// mnemometer reports: sortable tables and the item browser. Inlined into every page; no
// network, no libraries. Item data is embedded gzip-compressed (base64) and rendered a
// page at a time, so a run of 10,000 items opens and filters without freezing.
"use strict";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

async function loadData(id) {
  const node = document.getElementById(id);
  if (!node) return null;
  if (node.type === "application/json") return JSON.parse(node.textContent);
  const bin = atob(node.textContent.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

// ---- sortable tables ----------------------------------------------------------------
function sortKey(td) {
  const v = td.getAttribute("data-v");
  if (v !== null) return v === "" ? NaN : Number(v);
  return td.textContent.trim().toLowerCase();
}

function makeSortable(table) {
  const rows = table.tHead ? table.tHead.rows : [];
  const heads = rows.length ? Array.from(rows[rows.length - 1].cells) : []; // under any spans
  heads.forEach((th, col) => {
    th.addEventListener("click", () => {
      const asc = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      for (const body of table.tBodies) {
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = sortKey(a.cells[col]), y = sortKey(b.cells[col]);
          const xn = typeof x === "number" && isNaN(x), yn = typeof y === "number" && isNaN(y);
          if (xn || yn) return xn === yn ? 0 : xn ? 1 : -1; // empty cells last
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach((r) => body.appendChild(r));
      }
    });
  });
}

// ---- item browser ---------------------------------------------------------------------
const fmt = (x, d = 3) => (x === null || x === undefined ? "n/a" : Number(x).toFixed(d));
const fmtMs = (x) => (x === null || x === undefined ? "" : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2));

function statusOf(it) {
  if (it.st && it.st !== "ok") return "error";
  if (it.ok === true) return "pass";
  if (it.ok === false) return "fail";
  return "unscored";
}

function badge(it) {
  const s = statusOf(it);
  const text = s === "error" ? it.st : s === "unscored" ? "n/a" : s;
  return el("span", { class: "badge " + s, text });
}

function searchText(it) {
  if (it._s === undefined) {
    const parts = [it.id, it.step, it.in, it.out, it.err];
    for (const [k, v] of Object.entries(it.g || {})) parts.push(k + ":" + v);
    for (const h of it.ret || []) parts.push(h[0]);
    for (const t of it.turns || []) parts.push(t.input, t.reply);
    it._s = parts.filter((p) => p).join("\n").toLowerCase();
  }
  return it._s;
}

function kv(pairs) {
  const box = el("div", { class: "kv" });
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === "") continue;
    box.append(el("div", { text: k }), el("div", {}, v instanceof Node ? v : String(v)));
  }
  return box;
}

function hits(it) {
  const rel = new Set(it.exp || []);
  const box = el("div", { class: "hits" });
  const got = new Set();
  (it.ret || []).forEach(([id, score], r) => {
    got.add(id);
    const mark = rel.has(id);
    box.append(el("span", { class: "hit" + (mark ? " rel" : ""), title: "rank " + (r + 1) + ", score " + fmt(score, 4) + (mark ? ", relevant" : "") },
      (mark ? "\u2713 " : "") + id));
  });
  const missed = (it.exp || []).filter((id) => !got.has(id));
  if (!(it.ret || []).length) box.append(el("span", { class: "count", text: "nothing returned" }));
  for (const id of missed) box.append(el("span", { class: "hit missed", title: "relevant, not returned" }, "\u2717 " + id));
  return box;
}

function metricsList(m) {
  const box = el("div", { class: "hits" });
  for (const [label, value] of m) box.append(el("span", { class: "chip metric" }, label + " ", el("b", { text: fmt(value) })));
  return box;
}

function gradeText(g) {
  if (!g || typeof g !== "object") return g === undefined ? "" : JSON.stringify(g);
  const parts = [];
  if (g.score !== undefined) parts.push("score " + fmt(g.score, 2));
  if (g.reason) parts.push(g.reason);
  if (g.missing && g.missing.length) parts.push("missing: " + g.missing.join(", "));
  if (g.forbidden && g.forbidden.length) parts.push("forbidden: " + g.forbidden.join(", "));
  if (g.expected) parts.push("expected: " + g.expected);
  if (g.similarity !== null && g.similarity !== undefined) parts.push("similarity " + fmt(g.similarity, 3) + (g.rescued ? " (rescued)" : ""));
  for (const [k, v] of Object.entries(g)) {
    if (!["score", "reason", "missing", "forbidden", "expected", "similarity", "rescued", "words"].includes(k)) parts.push(k + ": " + (typeof v === "object" ? JSON.stringify(v) : v));
  }
  return parts.join(" \u00b7 ");
}

function turnsTable(turns) {
  const t = el("table", { class: "turns" }, el("thead", {}, el("tr", {},
    ...["turn", "input", "reply", "verdict", "ms"].map((h) => el("th", { class: h === "ms" ? "n" : null, text: h })))));
  const b = el("tbody");
  for (const tr of turns) {
    const graded = tr.grade !== undefined;
    const cls = graded && typeof tr.grade.score === "number" ? (tr.grade.score >= 1 ? "pos" : tr.grade.score <= 0 ? "neg" : "") : "";
    b.append(el("tr", {},
      el("td", { class: "n", title: "session " + (tr.session ?? "") + ", turn " + (tr.turn ?? ""),
        text: (tr.session !== undefined ? "s" + tr.session + " " : "") + (tr.turn !== undefined ? "t" + tr.turn : "") }),
      el("td", {}, el("div", { class: "text", text: tr.input || "" })),
      el("td", {}, el("div", { class: "text", text: tr.reply || "" })),
      el("td", { class: cls, text: graded ? gradeText(tr.grade) : "" }),
      el("td", { class: "n", text: fmtMs(tr.latency_ms) })));
  }
  t.append(b);
  return t;
}

function detail(it) {
  const box = el("div");
  box.append(kv([
    ["item", it.id + (it.step ? " \u00b7 step " + it.step : "")],
    ["status", badge(it)],
    ["groups", Object.keys(it.g || {}).length ? el("div", {}, ...Object.entries(it.g).map(([k, v]) => el("span", { class: "chip", text: k + ": " + v }))) : null],
    ["latency", it.lat !== undefined ? fmtMs(it.lat) + " ms" : null],
    ["tokens", it.tok ? Object.entries(it.tok).map(([k, v]) => k + " " + v).join(", ") : null],
  ]));
  if (it.err) box.append(el("h3", { text: "Error" }), el("div", { class: "err", text: it.err }));
  if (it.in) box.append(el("h3", { text: "Query" }), el("div", { class: "text", text: it.in }));
  if ((it.ret && it.ret.length) || (it.exp && it.exp.length)) {
    box.append(el("h3", { text: "Returned (\u2713 relevant, \u2717 relevant but not returned)" }), hits(it));
  }
  if (it.out !== undefined && it.out !== null) box.append(el("h3", { text: "Answer" }), el("div", { class: "text", text: it.out }));
  if (it.turns && it.turns.length) box.append(el("h3", { text: "Turns and verdicts" }), turnsTable(it.turns));
  if (it.v) {
    box.append(el("h3", { text: "Verdicts" }));
    for (const [k, v] of Object.entries(it.v)) box.append(el("div", { class: "text" }, el("b", { text: k + ": " }), typeof v === "object" ? JSON.stringify(v, null, 1) : String(v)));
  }
  if (it.m && it.m.length) box.append(el("h3", { text: "Metrics" }), metricsList(it.m));
  if (it.x) box.append(el("h3", { text: "Other detail" }), el("pre", { class: "text", text: JSON.stringify(it.x, null, 1) }));
  return box;
}

function itemBrowser(root, items, config) {
  const state = { q: "", status: "all", groups: {}, sort: "plan", page: 0, size: 50 };
  const search = root.querySelector("#mm-search");
  const status = root.querySelector("#mm-status");
  const sort = root.querySelector("#mm-sort");
  const size = root.querySelector("#mm-size");
  const body = root.querySelector("#mm-items tbody");
  const count = root.querySelector("#mm-count");
  const prev = root.querySelector("#mm-prev"), next = root.querySelector("#mm-next");
  const pageLabel = root.querySelector("#mm-page");
  const head = config.head;
  let shown = items;

  function apply() {
    const terms = state.q.toLowerCase().split(/\s+/).filter((t) => t);
    const groups = Object.entries(state.groups).filter(([, v]) => v !== "");
    shown = items.filter((it) => {
      if (state.status !== "all" && statusOf(it) !== state.status) return false;
      for (const [k, v] of groups) if (!it.g || it.g[k] !== v) return false;
      if (terms.length) {
        const s = searchText(it);
        for (const t of terms) if (!s.includes(t)) return false;
      }
      return true;
    });
    if (state.sort === "slow") shown = shown.slice().sort((a, b) => (b.lat ?? -1) - (a.lat ?? -1));
    else if (state.sort === "id") shown = shown.slice().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    else if (state.sort === "worst" && head) shown = shown.slice().sort((a, b) => (a.h ?? 2) - (b.h ?? 2));
    state.page = 0;
    draw();
  }

  function draw() {
    const pages = Math.max(1, Math.ceil(shown.length / state.size));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * state.size;
    const rows = document.createDocumentFragment();
    for (const it of shown.slice(start, start + state.size)) {
      const tr = el("tr", { class: "item-row", "data-status": statusOf(it), "data-id": it.id, tabindex: "0" },
        el("td", { class: "n", text: it.i }),
        el("td", { class: "mono", text: it.id + (it.step ? " \u00b7 " + it.step : "") }),
        el("td", {}, ...Object.entries(it.g || {}).map(([k, v]) => el("span", { class: "chip", title: k, text: v }))),
        el("td", { class: "input", title: it.in || "", text: it.in || "" }),
        el("td", {}, badge(it)),
        head ? el("td", { class: "n", text: it.h === undefined ? "" : fmt(it.h) }) : null,
        el("td", { class: "n", text: fmtMs(it.lat) }));
      const toggle = () => {
        const open = tr.nextSibling && tr.nextSibling.classList && tr.nextSibling.classList.contains("detail");
        if (open) { tr.nextSibling.remove(); return; }
        const td = el("td", { colspan: String(tr.cells.length) }, detail(it));
        tr.after(el("tr", { class: "detail" }, td));
      };
      tr.addEventListener("click", toggle);
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
      rows.append(tr);
    }
    body.replaceChildren(rows);
    count.textContent = shown.length === items.length
      ? items.length + " items"
      : shown.length + " of " + items.length + " items";
    pageLabel.textContent = "page " + (state.page + 1) + " of " + pages;
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.q = search.value; apply(); }, 120);
  });
  status.addEventListener("change", () => { state.status = status.value; apply(); });
  sort.addEventListener("change", () => { state.sort = sort.value; apply(); });
  size.addEventListener("change", () => { state.size = Number(size.value); draw(); });
  for (const sel of root.querySelectorAll("select[data-group]")) {
    sel.addEventListener("change", () => { state.groups[sel.getAttribute("data-group")] = sel.value; apply(); });
  }
  prev.addEventListener("click", () => { state.page -= 1; draw(); });
  next.addEventListener("click", () => { state.page += 1; draw(); });
  apply();
  root.setAttribute("data-ready", "1");
}

// ---- filter boxes for server-rendered tables ---------------------------------------------
function makeFilter(input) {
  const rows = () => document.querySelectorAll("table." + input.getAttribute("data-filter") + " > tbody > tr");
  input.addEventListener("input", () => {
    const terms = input.value.toLowerCase().split(/\s+/).filter((t) => t);
    for (const tr of rows()) {
      const text = tr.textContent.toLowerCase();
      tr.hidden = !terms.every((t) => text.includes(t));
    }
  });
}

document.addEventListener("DOMContentLoaded", async () => {
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("input[data-filter]").forEach(makeFilter);
  const root = document.getElementById("mm-browser");
  if (root) {
    const config = JSON.parse(document.getElementById("mm-config").textContent);
    if (typeof DecompressionStream === "undefined") {
      root.querySelector("#mm-count").textContent = "This browser cannot unpack the embedded "
        + "items (it needs Chrome 80, Firefox 113 or Safari 16.4 or newer); items.jsonl has them.";
    } else {
      itemBrowser(root, await loadData("mm-items-data"), config);
    }
  }
  window.mmReadyAt = performance.now(); // what the benchmark reads: the first page is drawn
  document.body.setAttribute("data-ready", "1");
});
