// The grading app's pages.  The change key arrives once, in the fragment of the address the
// app printed (#key=...), and is kept in this origin's localStorage (bound to the app's port,
// unlike cookies); every change sends it in a header, with the XSRF token.
// The grading page: rubric items toggled by click or keys, comments, adjustments,
// overrides and rubric edits, each sent with the version of the grade and the hash of the
// answer the page shows; a refused change (a stale grade, an answer handed in again) shows
// the conflict and overwrites nothing.  Every element the script uses is found once, at
// load, by its place in the page's own structure (never by a document-wide id lookup, which
// an element inside a student's answer could answer first); form fields are read from
// their form.
"use strict";
(function () {
  const KEY = "lecturelib-change-key";
  const fragment = /^#key=([A-Za-z0-9_-]{20,100})$/.exec(window.location.hash);
  if (fragment) {
    window.localStorage.setItem(KEY, fragment[1]);
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  const xsrf = document.querySelector('head > meta[name="xsrf"]').content;

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf,
                "X-Lecturelib-Key": window.localStorage.getItem(KEY) || ""},
      body: JSON.stringify(body)
    });
    let data = {};
    try { data = await response.json(); } catch (e) {
      data = {error: response.status === 403
        ? "this page may not change grades (open the address the app printed again)"
        : "the server said " + response.status};
    }
    return {status: response.status, data: data};
  }

  const main = document.querySelector("body > main#main");
  const nameForm = main.querySelector(":scope > section > form.grader-name");
  if (nameForm) nameForm.addEventListener("submit", async function (e) {
    e.preventDefault();
    const reply = await post("/grader", {grader: nameForm.elements.namedItem("grader").value});
    if (reply.status === 200) { window.location.reload(); return; }
    nameForm.querySelector("output").textContent = "Not saved: " + (reply.data.error || "error " + reply.status);
  });

  const stateElement = main.querySelector(':scope > script#state[type="application/json"]');
  if (!stateElement) return;
  let state = JSON.parse(stateElement.textContent);
  const shownSha = state.answer_sha;  // the answer on this page, whatever a save returns
  const status = main.querySelector(":scope > #status");
  const conflict = main.querySelector(":scope > #conflict");
  const pager = main.querySelector(":scope > nav.pager");
  const gradeCol = main.querySelector(":scope > .columns > section.grade-col");
  const score = gradeCol.querySelector(":scope > h2 > #score");
  const gradedBy = gradeCol.querySelector(":scope > #graded-by");
  const items = gradeCol.querySelectorAll(":scope > ol.rubric > li > button.item");
  const gradeForm = gradeCol.querySelector(":scope > form#grade-form");
  const overrideForm = gradeCol.querySelector(":scope > form#override-form");
  const field = function (form, name) { return form.elements.namedItem(name); };

  function say(text) { status.textContent = text; }

  function show(s) {
    state = Object.assign(state, s);
    score.textContent = String(Math.round(state.score * 1000) / 1000);
    items.forEach(function (b) {
      b.setAttribute("aria-pressed", state.applied.indexOf(b.dataset.item) >= 0 ? "true" : "false");
    });
    if (gradeForm) {
      field(gradeForm, "comment").value = state.comment;
      field(gradeForm, "adjustment").value = state.adjustment;
      field(gradeForm, "adjustment_reason").value = state.adjustment_reason;
    }
    if (overrideForm) {
      field(overrideForm, "override").value = state.override === null ? "" : state.override;
      field(overrideForm, "override_reason").value = state.override_reason;
    }
    gradedBy.textContent = state.version > 0 && !state.stale
      ? "Last change by " + state.grader + " at " + state.updated_at
      : (state.pending ? "Not graded yet." : "");
  }

  function conflictShown(mine, why, theirs) {
    conflict.hidden = false;
    conflict.textContent = why === "answer"
      ? "Conflict: the student handed in a new answer since this page was opened. Your change (" +
        mine + ") was NOT saved. Reload the page to read the new answer and grade it."
      : "Conflict: " + (theirs.grader || "another grader") + " changed this grade at " +
        theirs.updated_at + " while you were looking at an older version. Your change (" + mine +
        ") was NOT saved; the page now shows their grade. Apply your change again if it is still right.";
  }

  async function send(url, body, what) {
    const reply = await post(url, Object.assign({
      assignment: state.assignment, question: state.question, sid: state.sid,
      version: state.version, answer_sha: shownSha
    }, body));
    if (reply.status === 200) {
      conflict.hidden = true;
      show(reply.data.state);
      say("Saved: " + what + ".");
    } else if (reply.status === 409) {
      conflictShown(what, reply.data.conflict, reply.data.state);
      if (reply.data.conflict !== "answer") show(reply.data.state);
      say("");
    } else {
      say("");
      conflict.hidden = false;
      conflict.textContent = "Not saved: " + (reply.data.error || ("error " + reply.status));
    }
  }

  function gradeBody(applied) {
    return {
      applied: applied,
      comment: field(gradeForm, "comment").value,
      adjustment: Number(field(gradeForm, "adjustment").value || 0),
      adjustment_reason: field(gradeForm, "adjustment_reason").value
    };
  }

  function toggle(item) {
    const applied = state.applied.slice();
    const at = applied.indexOf(item);
    if (at >= 0) applied.splice(at, 1); else applied.push(item);
    send("/api/grade", gradeBody(applied), (at >= 0 ? "removed " : "applied ") + "item " + item);
  }

  items.forEach(function (b) {
    b.addEventListener("click", function () { toggle(b.dataset.item); });
  });
  if (gradeForm) gradeForm.addEventListener("submit", function (e) {
    e.preventDefault();
    send("/api/grade", gradeBody(state.applied), "comment and adjustment");
  });
  if (overrideForm) overrideForm.addEventListener("submit", function (e) {
    e.preventDefault();
    const raw = field(overrideForm, "override").value;
    send("/api/override", {points: raw === "" ? null : Number(raw),
                           reason: field(overrideForm, "override_reason").value}, "override");
  });
  gradeCol.querySelectorAll(":scope > ol.rubric > li > details > form.edit-item").forEach(function (f) {
    f.addEventListener("submit", async function (e) {
      e.preventDefault();
      const reply = await post("/api/rubric", {
        assignment: state.assignment, question: state.question, item: f.dataset.item,
        version: Number(f.dataset.version), points: Number(field(f, "points").value),
        text: field(f, "text").value
      });
      if (reply.status === 200) { window.location.reload(); return; }
      conflict.hidden = false;
      conflict.textContent = reply.status === 409
        ? "Conflict: someone changed rubric item " + f.dataset.item + " first; reload the page to see it. Your edit was NOT saved."
        : "Not saved: " + (reply.data.error || ("error " + reply.status));
    });
  });
  const links = {n: pager.querySelector(":scope > a#next"), p: pager.querySelector(":scope > a#previous")};
  document.addEventListener("keydown", function (e) {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "n" || e.key === "p") {
      if (links[e.key]) window.location.href = links[e.key].href;
    } else if (/^[1-9]$/.test(e.key)) {
      const b = items[Number(e.key) - 1];
      if (b) { e.preventDefault(); toggle(b.dataset.item); }
    }
  });
  show(state);
})();
