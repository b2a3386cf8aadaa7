// The advance reservations on the page: on the card of each GPU one holds, a line with its
// name and window (and MAINT marked), the card styled by whether one is active now or still to
// come; and on the timeline of the GPUs, a band over each window. Whether one is active is
// read against the board's clock (`now()` of board.js), never sent: a window opens and closes
// with no change on the daemon, so `reservationsTick` redraws when one does. Loaded before
// board.js, whose helpers (`el`, `svg`, `now`, `missing`, `board`) it uses when called.
"use strict";

// What the timeline spans: the last hour, so that a window under way shows where it began,
// and the next 23, a day in all.
const TIMELINE_BEFORE = 3600;
const TIMELINE_AFTER = 23 * 3600;

// `active`, `coming` or `over`, at `t`; an end of `null` is none.
function resvState(r, t) {
  if (r.end !== null && r.end <= t) return "over";
  return r.start <= t ? "active" : "coming";
}

// `HH:MM` when `t` falls on the day of `today`, else the date too.
function clockTime(t, today) {
  const d = new Date(t * 1000), n = new Date(today * 1000);
  const pad = (x) => String(x).padStart(2, "0");
  const hm = pad(d.getHours()) + ":" + pad(d.getMinutes());
  if (d.toDateString() === n.toDateString()) return hm;
  return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + hm;
}

// Its window in words: "until 14:30" when active, "from 16:00 until 17:00" when to come.
function resvWindowText(r, state, t) {
  const end = r.end === null ? "until further notice" : "until " + clockTime(r.end, t);
  return state === "active" ? end : "from " + clockTime(r.start, t) + " " + end;
}

// Who may use it, for the line's tooltip.
function resvWho(r) {
  const who = [r.users && "users " + r.users, r.accounts && "accounts " + r.accounts].filter(Boolean);
  return "reservation " + r.name + (who.length ? " for " + who.join(", ") : "") +
    (r.flags.length ? "; flags " + r.flags.join(",") : "");
}

// The reservations not over that hold GPU `gpu`, by start.
function reservationsOf(live, gpu, t) {
  return (live.reservations || []).filter((r) => r.gpus.includes(gpu) && resvState(r, t) !== "over");
}

// How GPU `gpu`'s card is marked: `active` when a reservation holds it now, `coming` when
// one will, else `null`.
function reservationMark(live, gpu) {
  const states = reservationsOf(live, gpu, now()).map((r) => resvState(r, now()));
  return states.includes("active") ? "active" : states.length ? "coming" : null;
}

// The card's lines for GPU `gpu`'s reservations.
function reservationLines(live, gpu) {
  const t = now();
  return reservationsOf(live, gpu, t).map((r) => {
    const state = resvState(r, t);
    return el("div", {
      class: "reservation " + state, "data-reservation": r.name, "data-resv-state": state,
      "data-resv-start": r.start, "data-resv-end": r.end === null ? "" : r.end, "data-maint": r.maint || null,
      title: resvWho(r),
    },
    el("span", { class: "resv-label" }, state === "active" ? "reserved:" : "reservation:"), " ",
    el("span", { class: "resv-name" }, r.name), " ", resvWindowText(r, state, t),
    r.maint ? [" ", el("span", { class: "resv-maint" }, "MAINT")] : null);
  });
}

// What the reservations look like at `t`, to know when a window opened or closed.
function resvSignature(live, t) {
  return (live.reservations || []).map((r) => r.name + ":" + resvState(r, t)).join(",");
}

// The timeline of GPUs `indices` from `t - TIMELINE_BEFORE` to `t + TIMELINE_AFTER`, with
// a band over each window of `reservations` on the GPUs it holds: the part already past and
// the part to come drawn apart, the band named.
function timelineChart(indices, reservations, t) {
  const w = 900, labelW = 56, rowH = 24, axisH = 18, right = 8;
  const from = t - TIMELINE_BEFORE, to = t + TIMELINE_AFTER;
  const h = axisH + indices.length * rowH + 2;
  const x = (s) => (labelW + ((Math.min(Math.max(s, from), to) - from) / (to - from)) * (w - labelW - right));
  const at = (s) => x(s).toFixed(1);
  const picture = svg("svg", { viewBox: `0 0 ${w} ${h}`, "data-chart": "timeline",
    "data-from": Math.round(from), "data-to": Math.round(to) });
  // A mark every three hours, on the hour.
  const tick = new Date(from * 1000);
  tick.setMinutes(0, 0, 0);
  for (tick.setHours(tick.getHours() + 1); tick.getTime() / 1000 <= to; tick.setHours(tick.getHours() + 3)) {
    const s = tick.getTime() / 1000;
    picture.append(svg("line", { class: "tick", x1: at(s), x2: at(s), y1: axisH - 4, y2: h }),
      svg("text", { class: "tick", x: (x(s) + 2).toFixed(1), y: axisH - 6 }, clockTime(s, t)));
  }
  indices.forEach((gpu, i) => {
    const y = axisH + i * rowH;
    picture.append(svg("text", { class: "row", x: 0, y: y + rowH / 2 + 4 }, "GPU " + gpu),
      svg("line", { class: "row", x1: labelW, x2: w - right, y1: y + rowH, y2: y + rowH }));
    for (const r of reservations) {
      const end = r.end === null ? Infinity : r.end;
      if (!r.gpus.includes(gpu) || r.start >= to || end <= from) continue;
      const band = svg("g", { class: r.maint ? "band maint" : "band", "data-reservation": r.name, "data-gpu": gpu,
        "data-resv-start": r.start, "data-resv-end": r.end === null ? "" : r.end });
      const bar = (part, a, b) => svg("rect", { class: part, x: at(a), y: y + 3, width: Math.max(1, x(b) - x(a)).toFixed(1), height: rowH - 6 });
      if (r.start < t) band.append(bar("past", r.start, Math.min(end, t)));
      if (end > t) band.append(bar("coming", Math.max(r.start, t), end));
      band.append(svg("text", { x: (x(r.start) + 4).toFixed(1), y: y + rowH / 2 + 4 }, r.name + (r.maint ? " (MAINT)" : "")),
        svg("title", {}, resvWho(r) + ", " + resvWindowText(r, resvState(r, t), t)));
      picture.append(band);
    }
  });
  picture.append(svg("line", { class: "now", x1: at(t), x2: at(t), y1: axisH - 4, y2: h }));
  return picture;
}

// Draws the timeline of the GPUs when a reservation not over holds any of them; says why
// when the reservations could not be read.
function renderTimeline(live) {
  const box = document.getElementById("timeline-box");
  const chart = document.getElementById("timeline");
  const t = now();
  board.resvSignature = resvSignature(live, t);
  board.timelineAt = t;
  chart.replaceChildren();
  if (!live.reservations) {
    const why = missing(live, "reservations");
    box.hidden = !why || !live.gpus;
    if (why) chart.append(el("p", { class: "note", "data-missing": "reservations" }, "Reservations: not available — " + why.why));
    return;
  }
  const indices = (live.gpus || []).map((g) => g.index);
  const shown = live.reservations.filter((r) => r.gpus.some((g) => indices.includes(g)) && resvState(r, t) !== "over");
  box.hidden = !shown.length;
  if (shown.length) chart.append(timelineChart(indices, shown, t));
}

// Once a second: when a window opened or closed the cards and the timeline are drawn again;
// else the timeline once a minute, for its line of now.
function reservationsTick() {
  const live = board.live;
  if (!live || !live.reservations) return;
  const t = now();
  if (resvSignature(live, t) !== board.resvSignature) {
    renderGpus(live);
    renderTimeline(live);
  } else if (t - board.timelineAt >= 60) {
    renderTimeline(live);
  }
}
