// jobs.js: the jobs of GET v1/jobs, refreshed every few seconds. Each row
// joins a job's record in the book (book.Job) and its live status on NATS
// (queue.JobStatus), either of which may be missing.
"use strict";

const refreshEvery = 2000; // milliseconds

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const count = (n) => Number(n || 0).toLocaleString("en-US");

// progressCell shows done/total with a bar from the live status, or the
// record's counts when the job is not live.
function progressCell(rec, live) {
  const td = el("td", "progress");
  if (live && live.total > 0) {
    const bar = el("progress");
    bar.max = live.total;
    bar.value = live.done;
    td.append(bar, " ", el("span", "count", `${count(live.done)} / ${count(live.total)}`));
    if (live.failed > 0) td.append(el("span", "loss", ` · ${count(live.failed)} failed`));
  } else if (live) {
    td.append(el("progress"), " ", el("span", "count", "counting the positions…")); // no value: indeterminate
  } else if (rec) {
    if (rec.state === "done") {
      const bar = el("progress");
      bar.max = bar.value = 1;
      td.append(bar, " ");
    }
    td.append(el("span", "count", `planned ${count(rec.planned)} · solved ${count(rec.solved)} · derived ${count(rec.derived)}`));
  }
  return td;
}

function row(view) {
  const rec = view.record;
  const live = view.live;
  const tr = el("tr");
  tr.dataset.job = rec ? rec.id : live.job_id;

  const job = el("td", "job");
  job.append(el("strong", "", tr.dataset.job));
  if (rec) job.append(el("br"), `from ${rec.root || "the empty board"} to depth ${rec.depth}`);

  const phase = (live && live.state) || (rec && rec.state) || "unknown";
  const message = (live && live.message) || (rec && rec.message) || "";
  const updated = (live && live.updated) || (rec && rec.updated);
  tr.append(
    job,
    el("td", "state " + phase, phase + (live ? "" : " (record)")),
    progressCell(rec, live),
    el("td", "message", message),
    el("td", "updated", updated ? new Date(updated).toLocaleString() : ""),
  );
  return tr;
}

// APIError is a request that failed; any other error is a bug of the page.
class APIError extends Error {}

async function getJobs() {
  let res;
  try {
    res = await fetch("v1/jobs", { headers: { Accept: "application/json" } });
  } catch (e) {
    throw new APIError("The server could not be reached: " + e.message);
  }
  let body;
  try {
    body = await res.json();
  } catch (e) {
    throw new APIError(`v1/jobs: HTTP ${res.status}, and the answer is not JSON`);
  }
  if (!res.ok) throw new APIError(body.error || `v1/jobs: HTTP ${res.status}`);
  return body;
}

async function refresh() {
  try {
    const body = await getJobs();

    const jobs = body.jobs || [];
    $("jobs").querySelector("tbody").replaceChildren(...jobs.map(row));
    $("jobs").hidden = jobs.length === 0;
    $("empty").hidden = jobs.length > 0;
    $("message").textContent = body.error || "";
    $("message").hidden = !body.error;
    const from = body.live ? "live from the book's NATS server" : "from the job records of the book (no live status)";
    $("status").textContent = `${jobs.length} job${jobs.length === 1 ? "" : "s"}, ${from}; ` +
      `read at ${new Date().toLocaleTimeString()}, again every ${refreshEvery / 1000} s.`;
  } catch (e) {
    if (!(e instanceof APIError)) console.error(e); // a bug: for the console too
    $("message").textContent = e.message;
    $("message").hidden = false;
  } finally {
    setTimeout(refresh, refreshEvery);
  }
}

refresh();
