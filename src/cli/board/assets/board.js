// The board's page: the state arrives as server-sent events (`/events`, each a whole `live`
// state); the GPU samples and the week's usage are read now and then while the page is open;
// `#/job/ID` shows one job. Everything is drawn with the DOM and SVG, text set as text. The
// reservations' marks and timeline are reservations.js's, loaded before this.
"use strict";

// The access token. The URL `slurmlet board` prints carries it in its fragment (`#token=…`),
// which the browser sends to no server; the page moves it to this tab's sessionStorage, which
// only pages of the board's own origin (its port included) can read, and sends it with each
// call in a header. Never in a cookie: a browser sends 127.0.0.1's cookies to all its ports.
const TOKEN_KEY = "slurmlet-board-token";

// Moves a token in the address's fragment to sessionStorage and out of the address; whether
// there was one.
function takeToken() {
  const given = location.hash.match(/^#token=([0-9a-f]+)$/);
  if (!given) return false;
  sessionStorage.setItem(TOKEN_KEY, given[1]);
  history.replaceState(null, "", location.pathname + location.search);
  return true;
}

takeToken();
const TOKEN = sessionStorage.getItem(TOKEN_KEY);
const SVG = "http://www.w3.org/2000/svg";

const board = {
  live: null,        // the last `live` state
  clockOffset: 0,    // the board's clock minus this browser's, seconds
  samples: null,     // `/api/samples`
  usage: null,       // `/api/usage`
  jobShown: null,    // the job id of `#/job/ID`
  resvSignature: "", // the reservations' states when last drawn (reservations.js)
  timelineAt: 0,     // when the timeline was last drawn
};

// ---- small helpers ----------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "onclick") node.addEventListener("click", v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children.flat()) if (c) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function now() {
  return Date.now() / 1000 + board.clockOffset;
}

function duration(secs) {
  if (secs === null || secs === undefined || secs < 0) return "-";
  secs = Math.floor(secs);
  const d = Math.floor(secs / 86400), h = Math.floor(secs / 3600) % 24, m = Math.floor(secs / 60) % 60, s = secs % 60;
  const two = (n) => String(n).padStart(2, "0");
  return (d ? d + "-" : "") + two(h) + ":" + two(m) + ":" + two(s);
}

function when(t) {
  if (!t) return "-";
  const date = new Date(t * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" +
    pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
}

function gib(bytes) {
  if (bytes === null || bytes === undefined) return "-";
  return (bytes / 2 ** 30).toFixed(1) + " GiB";
}

function say(text, kind) {
  const m = document.getElementById("message");
  m.textContent = text;
  m.dataset.kind = kind || "info";
  m.hidden = !text;
}

function missing(state, part) {
  return (state && state.missing || []).find((m) => m.part === part);
}

function isMine(job) {
  const caller = board.live && board.live.caller;
  return !!caller && (job.user_name === caller.name);
}

// Set once the board refuses the token: the page then stops asking.
let refusedToken = false;

function tokenRefused() {
  refusedToken = true;
  sessionStorage.removeItem(TOKEN_KEY);
  const status = document.getElementById("connection");
  status.textContent = "no access";
  status.dataset.connected = "false";
  say("This page has no valid token for the board: open the URL that `slurmlet board` printed " +
    "(a board started again prints a new one).", "token");
}

// A call to the board with the token; a refused token stops the page.
async function call(path, init) {
  const headers = Object.assign({ Authorization: "Bearer " + TOKEN }, (init && init.headers) || {});
  const resp = await fetch(path, Object.assign({ credentials: "omit", cache: "no-store" }, init, { headers }));
  if (resp.status === 401) {
    tokenRefused();
    throw new Error("the board refused the token");
  }
  return resp;
}

async function getJson(path) {
  const resp = await call(path);
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.error || ("HTTP " + resp.status));
  return body;
}

// ---- actions -----------------------------------------------------------------------------

async function act(jobId, action, button) {
  if (action === "cancel" && !window.confirm("Cancel job " + jobId + "?")) return;
  if (button) button.disabled = true;
  try {
    const resp = await call("/api/job/" + encodeURIComponent(jobId) + "/" + action, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    const body = await resp.json().catch(() => ({}));
    if (!resp.ok || !body.ok) throw new Error(body.error || ("HTTP " + resp.status));
    say(action + ": job " + jobId + " done", "info");
  } catch (e) {
    say(action + " of job " + jobId + " refused: " + e.message, "error");
  } finally {
    if (button) button.disabled = false;
  }
}

function actionButtons(job) {
  if (!isMine(job)) return [];
  const buttons = [];
  const button = (action, label) =>
    el("button", { "data-action": action, "data-job": job.job_id, onclick: (ev) => act(job.job, action, ev.target) }, label);
  if (job.state === "PENDING") {
    const held = /Held/i.test(job.reason || "");
    buttons.push(held ? button("release", "release") : button("hold", "hold"));
  }
  buttons.push(button("cancel", "cancel"));
  return buttons;
}

// ---- charts ------------------------------------------------------------------------------

// At most `most` samples: each run of samples becomes one, with the run's highest memory and
// utilisation, so that a week of samples draws as fast as an hour and no peak is lost.
function thin(samples, most) {
  if (samples.length <= most) return samples;
  const per = Math.ceil(samples.length / most);
  const out = [];
  for (let i = 0; i < samples.length; i += per) {
    const run = samples.slice(i, i + per);
    out.push([run[0][0], Math.max(...run.map((s) => s[1])), Math.max(...run.map((s) => s[2]))]);
  }
  return out;
}

// ---- GPUs --------------------------------------------------------------------------------

function sparkline(series, total) {
  const w = 240, h = 36;
  const line = svg("svg", { class: "spark", viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none" });
  if (!series || series.samples.length < 2) return line;
  const s = thin(series.samples, w);
  const t0 = s[0][0], t1 = s[s.length - 1][0] || t0 + 1;
  const x = (t) => ((t - t0) / Math.max(1, t1 - t0)) * w;
  const memTotal = total || series.total_memory || Math.max(...s.map((p) => p[1]), 1);
  const path = (value) => s.map((p, i) => (i ? "L" : "M") + x(p[0]).toFixed(1) + "," + (h - 1 - value(p) * (h - 2)).toFixed(1)).join("");
  line.append(svg("path", { class: "mem", d: path((p) => Math.min(1, p[1] / memTotal)) }));
  line.append(svg("path", { class: "util", d: path((p) => Math.min(1, p[2] / 100)) }));
  return line;
}

function holderLines(gpu) {
  const lines = [];
  for (const j of gpu.jobs) {
    if (!j.job) {
      lines.push(el("div", { class: "holder", "data-hidden": true }, "another user's job"));
      continue;
    }
    const share = j.shards ? ` — ${j.shards}/${gpu.shards} shards, ${gib(j.used_memory)} of ${gib(j.share_bytes)}` : "";
    const idle = j.idle_since
      ? [" ", el("span", { class: "idle", title: "every GPU of this job has stayed below the idle policy's threshold since " + new Date(j.idle_since * 1000).toLocaleString() }, "idle since " + new Date(j.idle_since * 1000).toLocaleTimeString())]
      : [];
    lines.push(el("div", { class: "holder", "data-job": j.job_id, "data-user": j.user_name || "", "data-idle-since": j.idle_since || "" },
      el("a", { href: "#/job/" + j.job_id }, "job " + j.job), " ", el("span", { class: "user" }, j.user_name || ""), share, ...idle));
  }
  for (const p of gpu.outside_queue) {
    lines.push(el("div", { class: "holder outsider", "data-pid": p.pid, "data-user": p.user_name || "" },
      `pid ${p.pid} (${p.user_name || "?"}) ${p.command || ""}, outside the queue`));
  }
  if (!lines.length) lines.push(el("div", { class: "holder free" }, "free"));
  return lines;
}

function renderGpus(live) {
  const box = document.getElementById("gpus");
  box.replaceChildren();
  if (!live.gpus) {
    const why = missing(live, "gpus");
    box.append(el("p", { class: "note", "data-missing": "gpus" }, "GPUs: not available" + (why ? " — " + why.why : "")));
    return;
  }
  if (!live.gpus.length) box.append(el("p", { class: "note" }, "This machine has no GPUs."));
  const samples = board.samples && board.samples.gpus;
  for (const gpu of live.gpus) {
    const used = gpu.memory_used, total = gpu.memory_total;
    const pct = used !== null && total ? Math.round((100 * used) / total) : null;
    const bar = el("div", { class: "bar" }, el("div"));
    bar.firstChild.style.width = (pct || 0) + "%";
    const series = samples ? samples.find((s) => s.index === gpu.index) : null;
    // A reservation active now on the GPU, or one to come, styles its card (reservations.js).
    const reserved = reservationMark(live, gpu.index);
    const classes = ["card", gpu.failed && "failed", reserved && "reserved-" + reserved].filter(Boolean).join(" ");
    box.append(el("div", { class: classes, "data-gpu": gpu.index, "data-failed": gpu.failed || null, "data-reserved": reserved },
      el("h3", {}, `GPU ${gpu.index}`, el("span", { class: "muted" }, " " + (gpu.name || gpu.gres_type || ""))),
      gpu.failed ? el("div", { class: "out-of-service" }, "out of service: " + gpu.failed) : null,
      el("div", { class: "figures" },
        el("span", { "data-figure": "memory" }, used === null && total === null ? "memory -" : `${gib(used)} / ${gib(total)}`),
        el("span", { "data-figure": "utilization" }, gpu.utilization === null ? "util -" : `util ${gpu.utilization}%`)),
      bar,
      holderLines(gpu),
      reservationLines(live, gpu.index),
      samples ? sparkline(series, total)
        : board.samples ? el("div", { class: "note", "data-missing": "samples" }, "last hour: not available") : null));
  }
}

// ---- queue -------------------------------------------------------------------------------

function gpusOf(job) {
  if (job.gpus && job.gpus.length) return job.gpus.join(",");
  if (job.gpu_count) return String(job.gpu_count);
  if (job.shards) return job.shards + " shards";
  return "-";
}

function renderQueue(live) {
  const q = live.queue;
  const note = document.getElementById("queue-note");
  const running = document.querySelector("#running tbody");
  const pending = document.querySelector("#pending tbody");
  running.replaceChildren();
  pending.replaceChildren();
  if (!q) {
    const why = missing(live, "queue");
    note.textContent = "Queue: not available" + (why ? " — " + why.why : "");
    note.hidden = false;
    return;
  }
  note.hidden = q.from === "queue";
  note.textContent = q.from === "queue" ? "" : "Pending jobs by priority; the daemon gives no backfill plan here, so expected starts are those its job list has.";
  document.getElementById("running-count").textContent = `(${q.running_total})`;
  document.getElementById("pending-count").textContent = `(${q.pending_total})`;
  for (const j of q.running) {
    running.append(el("tr", { "data-job": j.job_id, "data-state": j.state, class: isMine(j) ? "mine" : null },
      el("td", {}, el("a", { href: "#/job/" + j.job_id }, j.job)), el("td", {}, j.name), el("td", { class: "user" }, j.user_name),
      el("td", {}, j.state), el("td", {}, gpusOf(j)),
      el("td", { "data-since": j.start_time || "" }, duration(now() - (j.start_time || now()))),
      el("td", { "data-until": j.time_limit && j.start_time ? j.start_time + j.time_limit : "" },
        j.time_limit && j.start_time ? duration(j.start_time + j.time_limit - now()) : "UNLIMITED"),
      el("td", {}, actionButtons(j))));
  }
  q.pending.forEach((j, i) => {
    pending.append(el("tr", { "data-job": j.job_id, "data-state": j.state, class: isMine(j) ? "mine" : null },
      el("td", {}, i + 1), el("td", {}, el("a", { href: "#/job/" + j.job_id }, j.job)), el("td", {}, j.name),
      el("td", { class: "user" }, j.user_name), el("td", {}, gpusOf(j)), el("td", {}, String(j.priority ?? "")),
      el("td", {}, j.reason || "-"),
      el("td", {}, j.start_time ? when(j.start_time) : "N/A"), el("td", {}, actionButtons(j))));
  });
  const more = document.getElementById("pending-more");
  const rest = q.pending_total - q.pending.length;
  more.hidden = rest <= 0;
  more.textContent = rest > 0 ? `and ${rest} more pending` : "";
  // When the queue was first drawn, for the figures of how quickly the page comes up.
  if (performance.getEntriesByName("board-queue-drawn").length === 0) performance.mark("board-queue-drawn");
}

// The times that move by themselves, once a second, without a new state.
function tick() {
  for (const td of document.querySelectorAll("td[data-since]")) {
    if (td.dataset.since) td.textContent = duration(now() - Number(td.dataset.since));
  }
  for (const td of document.querySelectorAll("td[data-until]")) {
    if (td.dataset.until) td.textContent = duration(Number(td.dataset.until) - now());
  }
  reservationsTick();
}

// ---- usage -------------------------------------------------------------------------------

function renderUsage() {
  const u = board.usage;
  const chart = document.getElementById("usage-chart");
  chart.replaceChildren();
  const recent = document.querySelector("#recent tbody");
  recent.replaceChildren();
  const recentNote = document.getElementById("recent-note");
  if (!u) return;
  if (!u.users) {
    const why = missing(u, "usage");
    chart.append(el("p", { class: "note", "data-missing": "usage" }, "GPU-hours per user: not available" + (why ? " — " + why.why : "")));
  } else if (!u.users.length) {
    chart.append(el("p", { class: "note" }, "Nobody used the GPUs this week."));
  } else {
    const rowH = 22, labelW = 140, w = 720;
    const top = Math.max(...u.users.map((x) => x.gpu_seconds), 1);
    const picture = svg("svg", { viewBox: `0 0 ${w} ${u.users.length * rowH + 4}`, "data-chart": "usage" });
    u.users.forEach((x, i) => {
      const y = i * rowH + 2;
      const barW = ((w - labelW - 160) * x.gpu_seconds) / top;
      const hours = (x.gpu_seconds / 3600).toFixed(1);
      const bar = svg("g", { "data-user": x.user_name },
        svg("text", { x: 0, y: y + 14 }, x.user_name),
        svg("rect", { x: labelW, y: y + 3, width: Math.max(1, barW).toFixed(1), height: rowH - 8 }),
        svg("text", { x: labelW + barW + 6, y: y + 14 }, `${hours} GPU-h, ${x.jobs} jobs`));
      picture.append(bar);
    });
    chart.append(picture);
  }
  if (!u.recent) {
    const why = missing(u, "recent");
    recentNote.textContent = "Your recent jobs: not available" + (why ? " — " + why.why : "");
    recentNote.hidden = false;
    return;
  }
  recentNote.hidden = u.recent.length > 0;
  recentNote.textContent = "No jobs of yours this week.";
  for (const j of u.recent) {
    recent.append(el("tr", { "data-job": j.job_id },
      el("td", {}, el("a", { href: "#/job/" + j.job_id }, j.job)), el("td", {}, j.name), el("td", {}, j.state),
      el("td", {}, duration(j.elapsed)), el("td", {}, ENDED.test(j.state) ? j.exit_code : "-"),
      el("td", {}, gib(j.peak_gpu_memory))));
  }
}

// The states of a job that has ended: only these have an exit code.
const ENDED = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)/;

// ---- one job -----------------------------------------------------------------------------

function noval(v) {
  if (v === null || v === undefined) return null;
  if (typeof v !== "object") return v;
  if (v.infinite) return Infinity;
  return v.set ? v.number : null;
}

function jobFields(job) {
  const t = (v) => { const n = noval(v); return n ? when(n) : "Unknown"; };
  const minutes = (v) => { const n = noval(v); return n === Infinity ? "UNLIMITED" : n === null ? "-" : duration(n * 60); };
  const exit = (e) => e ? `${noval(e.return_code) ?? 0}:${noval(e.signal && e.signal.id) ?? 0}` : "-";
  return [
    ["JobId", job.job_id], ["JobName", job.name], ["UserId", `${job.user_name}(${job.user_id})`],
    ["GroupId", `${job.group_name}(${job.group_id})`], ["Priority", noval(job.priority)], ["Account", job.account],
    ["QOS", job.qos], ["JobState", (job.job_state || []).join(",")], ["Reason", job.state_reason],
    ["Dependency", job.dependency || "(null)"], ["Requeue", job.requeue ? 1 : 0], ["Restarts", job.restart_cnt],
    ["ExitCode", exit(job.exit_code)], ["DerivedExitCode", exit(job.derived_exit_code)],
    ["TimeLimit", minutes(job.time_limit)], ["SubmitTime", t(job.submit_time)], ["EligibleTime", t(job.eligible_time)],
    ["StartTime", t(job.start_time)], ["EndTime", t(job.end_time)], ["Partition", job.partition],
    ["NodeList", job.nodes || "(null)"], ["BatchHost", job.batch_host || "(null)"], ["NumCPUs", noval(job.cpus)],
    ["NumTasks", noval(job.tasks)], ["CPUs/Task", noval(job.cpus_per_task)], ["ReqTRES", job.tres_req_str],
    ["AllocTRES", job.tres_alloc_str || "(null)"], ["TresPerJob", job.tres_per_job || "(null)"],
    ["TresPerNode", job.tres_per_node || "(null)"], ["GRES", (job.gres_detail || []).join(",") || "(null)"],
    ["Command", job.command], ["WorkDir", job.current_working_directory],
    ["StdErr", job.stderr_expanded || job.standard_error], ["StdOut", job.stdout_expanded || job.standard_output],
    ["Comment", job.comment || "(null)"],
  ];
}

function lifeChart(samples, resolution) {
  const w = 900, h = 180, pad = 30;
  const picture = svg("svg", { viewBox: `0 0 ${w} ${h}`, preserveAspectRatio: "none", "data-chart": "job" });
  if (!samples || samples.length < 2) {
    picture.append(svg("text", { x: pad, y: h / 2 }, "no samples yet"));
    return picture;
  }
  samples = thin(samples, w);
  const t0 = samples[0][0], t1 = samples[samples.length - 1][0];
  const memTop = Math.max(...samples.map((s) => s[1]), 1);
  const utilTop = Math.max(100, ...samples.map((s) => s[2]));
  const x = (t) => pad + ((t - t0) / Math.max(1, t1 - t0)) * (w - 2 * pad);
  const y = (f) => h - pad - f * (h - 2 * pad);
  const path = (value) => samples.map((s, i) => (i ? "L" : "M") + x(s[0]).toFixed(1) + "," + y(value(s)).toFixed(1)).join("");
  picture.append(svg("path", { class: "mem", d: path((s) => s[1] / memTop) }));
  picture.append(svg("path", { class: "util", d: path((s) => s[2] / utilTop) }));
  picture.append(svg("text", { x: pad, y: 14 }, `memory (blue, peak ${gib(memTop)}), utilisation (orange); every ${resolution} s`));
  picture.append(svg("text", { x: pad, y: h - 8 }, when(t0)));
  picture.append(svg("text", { x: w - pad - 130, y: h - 8 }, when(t1)));
  return picture;
}

async function showJob(id) {
  document.getElementById("overview").hidden = true;
  document.getElementById("job-page").hidden = false;
  let page;
  try {
    page = await getJson("/api/job/" + encodeURIComponent(id));
  } catch (e) {
    document.getElementById("job-title").textContent = `Job ${id}: ${e.message}`;
    return;
  }
  if (board.jobShown !== id) return;
  const job = page.job;
  const state = (job.job_state || [])[0] || "";
  document.getElementById("job-title").textContent = `Job ${job.job_id} — ${job.name} (${job.user_name}) ${state}`;
  document.getElementById("job-title").dataset.job = job.job_id;
  const actions = document.getElementById("job-actions");
  actions.replaceChildren(...(page.mine && ["PENDING", "RUNNING", "SUSPENDED"].includes(state)
    ? actionButtons({ job: String(job.job_id), job_id: job.job_id, state, reason: job.state_reason, user_name: job.user_name })
    : []));
  const chart = document.getElementById("job-chart");
  chart.replaceChildren(page.samples ? lifeChart(page.samples, page.resolution)
    : el("p", { class: "note", "data-missing": "samples" }, "GPU use: not available" + (missing(page, "samples") ? " — " + missing(page, "samples").why : "")));
  const fields = document.querySelector("#job-fields tbody");
  fields.replaceChildren(...jobFields(job).map(([k, v]) => el("tr", { "data-field": k }, el("td", {}, k), el("td", {}, v ?? "-"))));
  const out = document.getElementById("job-output");
  const outSection = document.getElementById("job-output-section");
  outSection.hidden = !page.mine;
  out.textContent = page.output_tail ?? ("not available" + (missing(page, "output") ? " — " + missing(page, "output").why : ""));
  out.scrollTop = out.scrollHeight;
}

function route() {
  const m = location.hash.match(/^#\/job\/([0-9_]+)$/);
  board.jobShown = m ? m[1] : null;
  if (board.jobShown) {
    showJob(board.jobShown);
  } else {
    document.getElementById("job-page").hidden = true;
    document.getElementById("overview").hidden = false;
  }
}

// ---- updates -----------------------------------------------------------------------------

function onLive(update) {
  board.clockOffset = update.now - Date.now() / 1000;
  document.body.dataset.version = update.version;
  if (update.error) {
    // What the page shows stays, marked as old.
    const status = document.getElementById("connection");
    status.textContent = "the daemon does not answer";
    status.dataset.connected = "false";
    say("The board cannot read the daemon: " + update.error, "daemon");
    return;
  }
  if (!board.live || document.getElementById("message").dataset.kind === "daemon") say("");
  const before = board.live;
  board.live = update.live;
  document.getElementById("source").textContent = update.live.source;
  document.getElementById("caller").textContent = "as " + update.live.caller.name;
  renderGpus(update.live);
  renderTimeline(update.live);
  renderQueue(update.live);
  // A job of the caller's left the queue: their recent jobs changed.
  if (before && before.queue && update.live.queue) {
    const ids = new Set([...update.live.queue.running, ...update.live.queue.pending].map((j) => j.job_id));
    if ([...before.queue.running, ...before.queue.pending].some((j) => isMine(j) && !ids.has(j.job_id))) refreshUsage();
  }
  if (board.jobShown) showJob(board.jobShown);
}

async function refreshSamples() {
  try {
    board.samples = await getJson("/api/samples");
    if (!board.samples.gpus) board.samples = { gpus: null, missing: board.samples.missing };
  } catch (e) {
    board.samples = { gpus: null, missing: [{ part: "samples", why: e.message }] };
  }
  if (board.live) renderGpus(board.live);
}

async function refreshUsage() {
  try {
    board.usage = await getJson("/api/usage");
  } catch (e) {
    board.usage = { users: null, recent: null, missing: [{ part: "usage", why: e.message }, { part: "recent", why: e.message }] };
  }
  renderUsage();
}

// Opens the event stream. An EventSource sends no header, so each opening takes a one-time
// ticket fetched with the token just before; a stream that breaks is opened anew with a new
// one, as its own retry would bring the used ticket again.
async function connect() {
  const status = document.getElementById("connection");
  const again = () => {
    status.textContent = "reconnecting…";
    status.dataset.connected = "false";
    if (!refusedToken) setTimeout(connect, 1000);
  };
  let ticket;
  try {
    const resp = await call("/api/ticket", { method: "POST" });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    ticket = (await resp.json()).ticket;
  } catch (e) {
    again();
    return;
  }
  const events = new EventSource("/events?ticket=" + encodeURIComponent(ticket));
  events.addEventListener("live", (ev) => {
    const update = JSON.parse(ev.data);
    if (!update.error) {
      status.textContent = "live";
      status.dataset.connected = "true";
    }
    onLive(update);
  });
  events.onerror = () => {
    events.close();
    again();
  };
}

// The printed URL opened in a tab already on the page changes only the fragment: the page
// starts again with its token.
window.addEventListener("hashchange", () => (takeToken() ? location.reload() : route()));
if (TOKEN) {
  route();
  connect();
  refreshSamples();
  refreshUsage();
  setInterval(tick, 1000);
  setInterval(() => refusedToken || refreshSamples(), 30000);
  setInterval(() => refusedToken || refreshUsage(), 60000);
} else {
  tokenRefused();
}
