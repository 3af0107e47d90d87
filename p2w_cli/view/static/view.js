// p2w-rt view: table filter and sort, evidence links that highlight the events they cite, and the live reload
// of a run still being recorded.
"use strict";

function highlight(ids) {
  document.querySelectorAll(".highlight").forEach((el) => el.classList.remove("highlight"));
  let first = null;
  for (const id of ids) {
    const el = document.getElementById("ev-" + id);
    if (!el) continue;
    el.classList.add("highlight");
    if (el.tagName === "DETAILS") el.open = true;
    const step = el.closest(".step");
    if (step) step.classList.add("highlight");
    first = first || el;
  }
  if (first) first.scrollIntoView({ block: "center" });
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a.ev");
  if (!link) return;
  event.preventDefault();
  document.querySelectorAll("a.ev.active").forEach((a) => a.classList.remove("active"));
  const group = Array.from(link.parentElement.querySelectorAll("a.ev"));
  group.forEach((a) => a.classList.add("active"));
  highlight(group.map((a) => a.dataset.ev));
  history.replaceState(null, "", "#ev-" + link.dataset.ev);
});

const LIVE_EVERY_MS = 2000;

// A run page with no run.finished yet polls the run's state and reloads when it changed (an episode started or
// finished, the run finished); the reloaded page of a finished run has no #live, so the polling stops there. The
// runs page does the same while any listed run is recording.
function pollLive(marker) {
  const check = async () => {
    try {
      const response = await fetch(marker.dataset.poll, { cache: "no-store" });
      if (response.ok) {
        const state = await response.json();
        if (state.token !== marker.dataset.token) {
          location.reload();
          return;
        }
        marker.classList.remove("unreachable");
      } else {
        marker.classList.add("unreachable");
      }
    } catch (error) {
      marker.classList.add("unreachable");
    }
    setTimeout(check, LIVE_EVERY_MS);
  };
  setTimeout(check, LIVE_EVERY_MS);
}
function openTarget() {
  // a permalink to an LLM call (#llm-N-K) sits in its <details>' summary: open the call it names
  const target = location.hash.startsWith("#llm-") ? document.getElementById(location.hash.slice(1)) : null;
  const call = target && target.closest("details");
  if (call) call.open = true;
}
window.addEventListener("hashchange", openTarget);

window.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live");
  if (live && live.dataset.poll) pollLive(live);
  if (location.hash.startsWith("#ev-")) highlight([location.hash.slice(4)]);
  openTarget();
  const onlyDisagree = document.getElementById("only-disagree");
  if (onlyDisagree) {
    onlyDisagree.addEventListener("change", () => {
      document.getElementById(onlyDisagree.dataset.table).classList.toggle("only-disagree", onlyDisagree.checked);
    });
  }
  for (const input of document.querySelectorAll("input.filter")) {
    const table = document.getElementById(input.dataset.table);
    input.addEventListener("input", () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      for (const row of table.tBodies[0].rows) {
        const text = row.textContent.toLowerCase();
        row.hidden = !words.every((w) => text.includes(w));
      }
    });
  }
  for (const table of document.querySelectorAll("table.sortable")) {
    table.tHead.addEventListener("click", (event) => {
      const th = event.target.closest("th");
      if (!th) return;
      const index = th.cellIndex;
      const ascending = !th.classList.contains("sorted-asc");
      table.tHead.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
      const key = (row) => {
        const text = (row.cells[index] || { textContent: "" }).textContent.trim();
        const number = parseFloat(text.replace(/[$✓✗]/g, ""));
        return Number.isNaN(number) ? text.toLowerCase() : number;
      };
      const rows = Array.from(table.tBodies[0].rows);
      rows.sort((x, y) => {
        const a = key(x), b = key(y);
        const order = typeof a === typeof b ? (a < b ? -1 : a > b ? 1 : 0) : typeof a === "number" ? -1 : 1;
        return ascending ? order : -order;
      });
      rows.forEach((row) => table.tBodies[0].appendChild(row));
    });
  }
});
