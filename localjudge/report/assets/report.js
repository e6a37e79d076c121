"use strict";
// The report page: reads the data embedded above, draws the summaries, then the table of cases.
// The table's filters, sort, page and opened row live in the URL fragment (#metric=...&sort=score),
// so a view can be bookmarked, shared, or opened directly (the browser test does).
const D = JSON.parse(document.getElementById("data").textContent);
const R = D.rows;
const N = R.case.length;
const PAGE = 100;
const $ = (id) => document.getElementById(id);

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function fmt(x, digits = 3) {
  return x === null || x === undefined ? "—" : Number(x).toFixed(digits);
}
function pct(x) {
  return x === null || x === undefined ? "—" : (100 * x).toFixed(1) + "%";
}

// ---- header ----
function drawHeader() {
  $("title").textContent = D.title;
  const lines = D.sources.map(
    (s) => `<li><code>${esc(s.path)}</code>: ${s.records} ${s.kind} records; judges ${s.judges.map(esc).join(", ")}; metrics ${s.metrics.map(esc).join(", ")}</li>`
  );
  $("sources").innerHTML = `<ul>${lines.join("")}</ul><p class="muted">localjudge ${esc(D.localjudge_version)}; intervals: ${D.settings.n_bootstrap} bootstrap resamples, ${Math.round(100 * D.settings.ci_level)}%</p>`;
}

// ---- small charts (SVG) ----
function histogram(h, width = 180, height = 44) {
  if (!h) return '<span class="muted">no scores</span>';
  const top = Math.max(...h.counts, 1);
  const w = width / h.counts.length;
  const bars = h.counts
    .map((c, k) => `<rect x="${(k * w).toFixed(1)}" y="${(height - (height * c) / top).toFixed(1)}" width="${Math.max(w - 1, 1).toFixed(1)}" height="${((height * c) / top).toFixed(1)}"><title>${c}</title></rect>`)
    .join("");
  return `<svg class="hist" width="${width}" height="${height + 12}">${bars}<text x="0" y="${height + 11}">${fmt(h.low)}</text><text x="${width}" y="${height + 11}" text-anchor="end">${fmt(h.high)}</text></svg>`;
}

function scatter(points, xLabel, yLabel, diagonal, size = 280) {
  // points: [[x, y], ...]; axes span the points' own ranges
  const pad = 30;
  if (!points.length) return '<span class="muted">no points</span>';
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  let [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (diagonal) [x0, x1] = [y0, y1] = [Math.min(x0, y0), Math.max(x1, y1)];
  if (x1 === x0) [x0, x1] = [x0 - 0.5, x1 + 0.5];
  if (y1 === y0) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const sx = (x) => pad + ((x - x0) / (x1 - x0)) * (size - pad - 8);
  const sy = (y) => size - pad - ((y - y0) / (y1 - y0)) * (size - pad - 8);
  const dots = points.map((p) => `<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="3"/>`).join("");
  const diag = diagonal ? `<line class="diag" x1="${sx(x0)}" y1="${sy(y0)}" x2="${sx(x1)}" y2="${sy(y1)}"/>` : "";
  return (
    `<svg class="scatter" width="${size}" height="${size}">${diag}` +
    `<line class="axis" x1="${pad}" y1="${size - pad}" x2="${size}" y2="${size - pad}"/><line class="axis" x1="${pad}" y1="0" x2="${pad}" y2="${size - pad}"/>` +
    dots +
    `<text x="${pad}" y="${size - pad + 12}">${fmt(x0)}</text><text x="${size}" y="${size - pad + 12}" text-anchor="end">${fmt(x1)}</text>` +
    `<text x="${(size + pad) / 2}" y="${size - 4}" text-anchor="middle">${esc(xLabel)}</text>` +
    `<text x="${pad - 3}" y="${size - pad}" text-anchor="end">${fmt(y0, 1)}</text><text x="${pad - 3}" y="10" text-anchor="end">${fmt(y1, 1)}</text>` +
    `<text x="10" y="${(size - pad) / 2}" transform="rotate(-90 10 ${(size - pad) / 2})" text-anchor="middle">${esc(yLabel)}</text></svg>`
  );
}

// ---- per metric and judge ----
function drawSummary() {
  const rows = D.groups.map((g, k) => {
    const unscored = g.n - g.scored;
    const reasons = Object.entries(g.unscored).map(([why, n]) => `<li>${n} × ${esc(why)}</li>`).join("");
    const ci = g.ci ? ` [${fmt(g.ci[0])}, ${fmt(g.ci[1])}]` : "";
    return (
      `<tr><td>${esc(g.metric)}</td><td>${esc(g.judge)}</td><td class="num">${g.n}</td>` +
      `<td class="num">${fmt(g.mean)}<span class="muted">${ci}</span></td><td class="num">${pct(g.pass_rate)}</td>` +
      `<td class="num">${fmt(g.valid_mass)}</td><td>${pct(unscored / g.n)} (${unscored})${reasons ? `<ul class="reasons">${reasons}</ul>` : ""}</td>` +
      `<td>${histogram(g.hist)}</td><td><a href="#metric=${encodeURIComponent(g.metric)}&judge=${encodeURIComponent(g.judge)}" data-group="${k}">cases</a></td></tr>`
    );
  });
  $("summary").innerHTML =
    '<table><thead><tr><th>metric</th><th>judge</th><th class="num">cases</th><th class="num">mean score [interval]</th>' +
    '<th class="num">pass rate</th><th class="num">mean valid mass</th><th>unscored, and why</th><th>scores (histogram)</th><th></th></tr></thead>' +
    `<tbody>${rows.join("")}</tbody></table>`;
}

function drawAgreement() {
  if (!D.agreements.length) {
    $("agreement").innerHTML = '<p class="muted">No human scores in these cases: pass --human FIELD (the cases\' field holding them).</p>';
    return;
  }
  $("agreement").innerHTML =
    '<div class="cards">' +
    D.agreements
      .map((a) => {
        const rho = a.rho ? `Spearman ρ ${fmt(a.rho[0])}${a.rho[1] === null ? "" : ` [${fmt(a.rho[1])}, ${fmt(a.rho[2])}]`}` : "no correlation";
        const drawn = a.points.length < a.total - a.unscored ? ` (${a.points.length} of ${a.total - a.unscored} drawn)` : "";
        return (
          `<div class="card"><h3>${esc(a.metric)} · ${esc(a.judge)} against ${esc(a.human)}</h3>` +
          scatter(a.points, `judge ${a.judge_field}`, a.human, false) +
          `<p>${rho}; ${a.total} labelled, ${a.unscored} unscored${drawn}</p><p><b>${esc(a.verdict || "")}</b></p>` +
          `<details><summary>calibrate's report</summary><pre>${esc(a.text)}</pre></details></div>`
        );
      })
      .join("") +
    "</div>";
}

function drawCompare() {
  if (!D.comparisons.length) {
    $("compare").innerHTML = '<p class="muted">One judge per metric: give results files of two judges on the same cases to compare them.</p>';
    return;
  }
  $("compare").innerHTML =
    '<div class="cards">' +
    D.comparisons
      .map((c) => {
        const largest = c.largest
          .slice(0, 10)
          .map(([k, a, b]) => `<tr><td><a href="#q=${encodeURIComponent(D.cases[k])}&metric=${encodeURIComponent(c.metric)}">${esc(D.cases[k])}</a></td><td class="num">${fmt(a)}</td><td class="num">${fmt(b)}</td><td class="num">${fmt(a - b)}</td></tr>`)
          .join("");
        return (
          `<div class="card"><h3>${esc(c.metric)}: ${esc(c.a)} (A) vs ${esc(c.b)} (B)</h3>` +
          scatter(c.points, "A's score", "B's score", true) +
          `<p>${c.shared} cases judged by both, ${c.both} scored by both; mean A − B ${fmt(c.mean_difference)}; Spearman ρ ${fmt(c.spearman)}</p>` +
          `<p>Where they differ most:</p><table><thead><tr><th>case</th><th class="num">A</th><th class="num">B</th><th class="num">A − B</th></tr></thead><tbody>${largest}</tbody></table></div>`
        );
      })
      .join("") +
    "</div>";
}

// ---- the table of cases ----
const caseLower = D.cases.map((c) => c.toLowerCase());
const caseOrder = new Int32Array(D.cases.length); // rank of each case id in sorted order
D.cases
  .map((c, k) => k)
  .sort((a, b) => (D.cases[a] < D.cases[b] ? -1 : D.cases[a] > D.cases[b] ? 1 : 0))
  .forEach((k, rank) => (caseOrder[k] = rank));
const metrics = [...new Set(D.groups.map((g) => g.metric))];
const judges = [...new Set(D.groups.map((g) => g.judge))];
const KEYS = ["metric", "judge", "unscored", "min", "max", "q", "sort", "dir", "page", "open"];
let state = {};
let shown = new Int32Array(0);

function readFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  state = {};
  for (const k of KEYS) state[k] = params.get(k) || "";
}
function writeFragment() {
  const params = new URLSearchParams();
  for (const k of KEYS) if (state[k]) params.set(k, state[k]);
  history.replaceState(null, "", "#" + params.toString());
}

function options(select, names) {
  select.innerHTML = '<option value="">all</option>' + names.map((n) => `<option value="${esc(n)}">${esc(n)}</option>`).join("");
}

function filterRows() {
  const groupOk = D.groups.map((g) => (!state.metric || g.metric === state.metric) && (!state.judge || g.judge === state.judge));
  const lo = state.min === "" ? null : Number(state.min);
  const hi = state.max === "" ? null : Number(state.max);
  const q = state.q.toLowerCase();
  const out = new Int32Array(N);
  let n = 0;
  for (let i = 0; i < N; i++) {
    if (!groupOk[R.group[i]]) continue;
    const s = R.score[i];
    if (state.unscored === "unscored" && s !== null) continue;
    if (state.unscored === "scored" && s === null) continue;
    if ((lo !== null || hi !== null) && (s === null || (lo !== null && s < lo) || (hi !== null && s > hi))) continue;
    if (q && !caseLower[R.case[i]].includes(q)) continue;
    out[n++] = i;
  }
  shown = out.slice(0, n);
  sortRows();
}

function sortRows() {
  const key = state.sort;
  if (!key) return;
  const sign = state.dir === "desc" ? -1 : 1;
  const last = (v) => (v === null ? Infinity : v); // no value sorts last either way
  const value = {
    case: (i) => caseOrder[R.case[i]],
    metric: (i) => metrics.indexOf(D.groups[R.group[i]].metric),
    judge: (i) => judges.indexOf(D.groups[R.group[i]].judge),
    score: (i) => R.score[i],
    valid: (i) => R.valid[i],
    outcome: (i) => R.outcome[i],
  }[key];
  if (!value) return;
  const keys = new Float64Array(N);
  for (const i of shown) keys[i] = last(value(i));
  shown.sort((a, b) => {
    const x = keys[a];
    const y = keys[b];
    if (x === y) return a - b;
    if (x === Infinity) return 1;
    if (y === Infinity) return -1;
    return sign * (x - y);
  });
}

function distBars(i) {
  const d = R.dist[i];
  if (!d) return '<span class="muted">—</span>';
  const names = D.groups[R.group[i]].outcomes;
  return `<span class="dist">${d.map((p, k) => `<i style="height:${(p / 10).toFixed(1)}%" title="${esc(names[k])}: ${(p / 1000).toFixed(3)}"></i>`).join("")}</span>`;
}

function outcomeCell(i) {
  const name = D.outcome_names[R.outcome[i]];
  if (name === "unscored") {
    const why = R.reason[i] >= 0 ? D.reasons[R.reason[i]] : "no reason recorded";
    return `<span class="outcome-unscored">unscored: ${esc(why)}</span>`;
  }
  return `<span class="outcome-${esc(name)}">${esc(name || "—")}</span>`;
}

function fieldValue(v) {
  if (Array.isArray(v)) return v.map((x) => `• ${esc(typeof x === "string" ? x : JSON.stringify(x))}`).join("\n");
  return esc(typeof v === "string" ? v : JSON.stringify(v, null, 1));
}

function detailRow(i) {
  const g = D.groups[R.group[i]];
  const fields = Object.entries(D.fields[R.case[i]] || {});
  const dist = R.dist[i] ? g.outcomes.map((o, k) => `${o}: ${(R.dist[i][k] / 1000).toFixed(3)}`).join("  ") : "—";
  const more = Object.entries(D.details[String(i)] || {});
  const cells = [...fields, ["distribution", dist], ...more]
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${fieldValue(v)}</td></tr>`)
    .join("");
  return `<tr class="detail"><td colspan="7"><table class="fields">${cells}</table></td></tr>`;
}

function drawRows() {
  const page = Math.min(Number(state.page) || 0, Math.max(0, Math.ceil(shown.length / PAGE) - 1));
  const open = state.open === "" ? -1 : Number(state.open);
  const html = [];
  for (const i of shown.subarray(page * PAGE, (page + 1) * PAGE)) {
    const g = D.groups[R.group[i]];
    html.push(
      `<tr class="row${i === open ? " open" : ""}" data-i="${i}"><td class="case-id">${esc(D.cases[R.case[i]])}</td><td>${esc(g.metric)}</td><td>${esc(g.judge)}</td>` +
        `<td class="num">${fmt(R.score[i])}</td><td>${distBars(i)}</td><td class="num">${fmt(R.valid[i])}</td><td>${outcomeCell(i)}</td></tr>`
    );
    if (i === open) html.push(detailRow(i));
  }
  $("rows").innerHTML = html.join("");
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  const first = shown.length ? page * PAGE + 1 : 0;
  $("status").textContent = `rows ${first}–${Math.min((page + 1) * PAGE, shown.length)} of ${shown.length} shown (${N} records); click a row for its case`;
  $("status").dataset.shown = String(shown.length);
  $("pager").innerHTML =
    pages > 1
      ? `<button type="button" data-page="${page - 1}"${page ? "" : " disabled"}>previous</button><button type="button" data-page="${page + 1}"${page + 1 < pages ? "" : " disabled"}>next</button> page ${page + 1} of ${pages}`
      : "";
  for (const th of document.querySelectorAll("th[data-sort]")) {
    th.className = th.dataset.sort === state.sort ? `sorted-${state.dir === "desc" ? "desc" : "asc"}` : "";
  }
}

function syncControls() {
  $("f-metric").value = state.metric;
  $("f-judge").value = state.judge;
  $("f-unscored").value = state.unscored;
  $("f-min").value = state.min;
  $("f-max").value = state.max;
  $("f-q").value = state.q;
}

function showTiming(what, ms) {
  document.body.dataset[what] = ms.toFixed(1);
  const render = document.body.dataset.renderMs;
  const filter = document.body.dataset.filterMs;
  $("timing").textContent = `localjudge report: ${N} records; first render ${render || "…"} ms after the page started loading; last filter ${filter} ms`;
}

function refresh(refilter) {
  // the filter's time: selecting, sorting and rebuilding the table's rows (layout and paint follow)
  const t = performance.now();
  if (refilter) filterRows();
  drawRows();
  if (refilter) showTiming("filterMs", performance.now() - t);
}

function controlsChanged() {
  state.metric = $("f-metric").value;
  state.judge = $("f-judge").value;
  state.unscored = $("f-unscored").value;
  state.min = $("f-min").value;
  state.max = $("f-max").value;
  state.q = $("f-q").value;
  state.page = "";
  state.open = "";
  writeFragment();
  refresh(true);
}

function wire() {
  for (const id of ["f-metric", "f-judge", "f-unscored", "f-min", "f-max", "f-q"]) $(id).addEventListener("input", controlsChanged);
  $("f-clear").addEventListener("click", () => {
    state = Object.fromEntries(KEYS.map((k) => [k, ""]));
    syncControls();
    controlsChanged();
  });
  document.querySelector("#cases thead").addEventListener("click", (e) => {
    const key = e.target.dataset && e.target.dataset.sort;
    if (!key) return;
    state.dir = state.sort === key && state.dir !== "desc" ? "desc" : "asc";
    state.sort = key;
    state.page = "";
    writeFragment();
    sortRows();
    drawRows();
  });
  $("rows").addEventListener("click", (e) => {
    const tr = e.target.closest("tr.row");
    if (!tr) return;
    state.open = state.open === tr.dataset.i ? "" : tr.dataset.i;
    writeFragment();
    drawRows();
  });
  $("pager").addEventListener("click", (e) => {
    if (e.target.dataset.page === undefined) return;
    state.page = e.target.dataset.page;
    writeFragment();
    drawRows();
  });
  window.addEventListener("hashchange", () => {
    if (!location.hash.includes("=")) return; // a section's anchor, not a view of the table
    readFragment();
    syncControls();
    refresh(true);
    $("cases-section").scrollIntoView();
  });
}

drawHeader();
drawSummary();
drawAgreement();
drawCompare();
options($("f-metric"), metrics);
options($("f-judge"), judges);
readFragment();
syncControls();
refresh(true);
wire();
showTiming("renderMs", performance.now());
