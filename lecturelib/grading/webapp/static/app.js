// The grading page: rubric items toggled by click or keys, comments, adjustments,
// overrides and rubric edits, each sent with the version the page shows; a refused
// (stale) change shows the conflict and the current grade, and overwrites nothing.
"use strict";
(function () {
  const stateElement = document.getElementById("state");
  if (!stateElement) return;
  let state = JSON.parse(stateElement.textContent);
  const xsrf = document.querySelector('meta[name="xsrf"]').content;
  const status = document.getElementById("status");
  const conflict = document.getElementById("conflict");

  function say(text) { status.textContent = text; }

  function show(s) {
    state = Object.assign(state, s);
    document.getElementById("score").textContent = String(Math.round(state.score * 1000) / 1000);
    document.querySelectorAll("button.item").forEach(function (b) {
      b.setAttribute("aria-pressed", state.applied.indexOf(b.dataset.item) >= 0 ? "true" : "false");
    });
    const comment = document.getElementById("comment");
    if (comment) {
      comment.value = state.comment;
      document.getElementById("adjustment").value = state.adjustment;
      document.getElementById("adjustment-reason").value = state.adjustment_reason;
    }
    const override = document.getElementById("override");
    if (override) {
      override.value = state.override === null ? "" : state.override;
      document.getElementById("override-reason").value = state.override_reason;
    }
    document.getElementById("graded-by").textContent = state.version > 0 && !state.stale
      ? "Last change by " + state.grader + " at " + state.updated_at
      : (state.pending ? "Not graded yet." : "");
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf},
      body: JSON.stringify(body)
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {error: "the server said " + response.status}; }
    return {status: response.status, data: data};
  }

  function conflictShown(mine, theirs) {
    conflict.hidden = false;
    conflict.textContent = "Conflict: " + (theirs.grader || "another grader") + " changed this grade at " +
      theirs.updated_at + " while you were looking at an older version. Your change (" + mine +
      ") was NOT saved; the page now shows their grade. Apply your change again if it is still right.";
  }

  async function send(url, body, what) {
    const reply = await post(url, Object.assign({
      assignment: state.assignment, question: state.question, sid: state.sid, version: state.version
    }, body));
    if (reply.status === 200) {
      conflict.hidden = true;
      show(reply.data.state);
      say("Saved: " + what + ".");
    } else if (reply.status === 409) {
      conflictShown(what, reply.data.state);
      show(reply.data.state);
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
      comment: document.getElementById("comment").value,
      adjustment: Number(document.getElementById("adjustment").value || 0),
      adjustment_reason: document.getElementById("adjustment-reason").value
    };
  }

  function toggle(item) {
    const applied = state.applied.slice();
    const at = applied.indexOf(item);
    if (at >= 0) applied.splice(at, 1); else applied.push(item);
    send("/api/grade", gradeBody(applied), (at >= 0 ? "removed " : "applied ") + "item " + item);
  }

  document.querySelectorAll("button.item").forEach(function (b) {
    b.addEventListener("click", function () { toggle(b.dataset.item); });
  });
  const gradeForm = document.getElementById("grade-form");
  if (gradeForm) gradeForm.addEventListener("submit", function (e) {
    e.preventDefault();
    send("/api/grade", gradeBody(state.applied), "comment and adjustment");
  });
  const overrideForm = document.getElementById("override-form");
  if (overrideForm) overrideForm.addEventListener("submit", function (e) {
    e.preventDefault();
    const raw = document.getElementById("override").value;
    send("/api/override", {points: raw === "" ? null : Number(raw),
                           reason: document.getElementById("override-reason").value}, "override");
  });
  document.querySelectorAll("form.edit-item").forEach(function (f) {
    f.addEventListener("submit", async function (e) {
      e.preventDefault();
      const reply = await post("/api/rubric", {
        assignment: state.assignment, question: state.question, item: f.dataset.item,
        version: Number(f.dataset.version), points: Number(f.elements.points.value), text: f.elements.text.value
      });
      if (reply.status === 200) { window.location.reload(); return; }
      conflict.hidden = false;
      conflict.textContent = reply.status === 409
        ? "Conflict: someone changed rubric item " + f.dataset.item + " first; reload the page to see it. Your edit was NOT saved."
        : "Not saved: " + (reply.data.error || ("error " + reply.status));
    });
  });
  document.addEventListener("keydown", function (e) {
    const tag = (e.target && e.target.tagName) || "";
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "n" || e.key === "p") {
      const link = document.getElementById(e.key === "n" ? "next" : "previous");
      if (link) window.location.href = link.href;
    } else if (/^[1-9]$/.test(e.key)) {
      const items = document.querySelectorAll("button.item");
      const b = items[Number(e.key) - 1];
      if (b) { e.preventDefault(); toggle(b.dataset.item); }
    }
  });
  show(state);
})();
