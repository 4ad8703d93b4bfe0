// The grading app's pages.  The change key arrives once, in the fragment of the address the
// app printed (#key=...), and is kept in this origin's localStorage (bound to the app's port,
// unlike cookies); every change sends it in a header, with the XSRF token.
// The grading page: rubric items toggled by click or keys, comments, adjustments,
// overrides and rubric edits, each sent with the version of the grade and the hash of the
// answer the page shows; a refused change (a stale grade, an answer handed in again) shows
// the conflict and overwrites nothing.  Every element the script uses is found once, at
// load, by its place in the page's own structure (never by a document-wide id lookup, which
// an element inside a student's answer could answer first); form fields are read from
// their form.  Typed text is never lost: what the grader types and has not saved is kept
// per answer in this origin's localStorage (restored when the answer is opened again),
// leaving the answer with it warns first, and a change refused by a conflict is shown
// beside the grade that won.  An open regrade request on the answer is resolved from its
// page (keep the grade, or the items or points the form names, with a decision for the
// student), and so is a disagreement of two blind marks (keep the grade, or take the second
// mark).  Times are shown in the browser's time zone.
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
      // same-origin: the page's no-referrer policy would make the browser send "Origin: null"
      method: "POST", credentials: "same-origin", referrerPolicy: "same-origin",
      headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf,
                "X-Lecturelib-Key": window.localStorage.getItem(KEY) || ""},
      body: JSON.stringify(body)
    });
    const text = await response.text();
    let data = {};
    try { data = JSON.parse(text); } catch (e) {
      // a refusal (403: a revoked link, a role that may not) says why in plain text
      data = {error: /^\d{3}: /.test(text) ? text.slice(5).trim().slice(0, 300) : "the server said " + response.status};
    }
    return {status: response.status, data: data};
  }

  function localTime(iso) {
    const when = new Date(iso);
    return isNaN(when.getTime()) ? iso
      : when.toLocaleString(undefined, {dateStyle: "medium", timeStyle: "short"});
  }

  const main = document.querySelector("body > main#main");
  main.querySelectorAll(":scope > table.audit > tbody > tr > td > time[datetime]").forEach(function (t) {
    t.textContent = localTime(t.getAttribute("datetime"));
  });

  const groupsElement = main.querySelector(':scope > script#groups-state[type="application/json"]');
  if (groupsElement) {  // the answer groups page: static/groups.js, which that page loads
    document.dispatchEvent(new CustomEvent("lecturelib:groups", {detail: {post: post, main: main,
      where: JSON.parse(groupsElement.textContent)}}));
    return;
  }

  const stateElement = main.querySelector(':scope > script#state[type="application/json"]');
  if (!stateElement) return;
  let state = JSON.parse(stateElement.textContent);
  const shownSha = state.answer_sha;  // the answer on this page, whatever a save returns
  const status = main.querySelector(":scope > #status");
  const conflict = main.querySelector(":scope > #conflict");
  const unsavedBox = main.querySelector(":scope > #unsaved");
  const pager = main.querySelector(":scope > nav.pager");
  const gradeCol = main.querySelector(":scope > .columns > section.grade-col");
  const score = gradeCol.querySelector(":scope > h2 > #score");
  const gradedBy = gradeCol.querySelector(":scope > #graded-by");
  const items = gradeCol.querySelectorAll(":scope > ol.rubric > li > button.item");
  const gradeForm = gradeCol.querySelector(":scope > form#grade-form");
  const overrideForm = gradeCol.querySelector(":scope > form#override-form");
  const form = gradeForm || overrideForm;
  const field = function (f, name) { return f.elements.namedItem(name); };
  const NAMES = gradeForm ? ["comment", "adjustment", "adjustment_reason"] : ["override", "override_reason"];
  const DRAFT = "lecturelib-draft:" + state.assignment + "/" + state.question + "/" + state.sid;
  // leaving a page with work not saved: the pager's first link (or key) warns, the second goes
  // on; closing the page or typing another address brings the browser's own question
  function guardLeaving(notSaved, message) {
    let warned = false, leaving = false;
    window.addEventListener("beforeunload", function (e) {
      if (!leaving && notSaved()) { e.preventDefault(); e.returnValue = ""; }
    });
    return {
      go: function (href) {
        if (notSaved() && !warned) {
          warned = true;
          unsavedBox.hidden = false;
          unsavedBox.textContent = message;
          return;
        }
        leaving = true;
        window.location.href = href;
      },
      saved: function () { warned = false; unsavedBox.hidden = true; },
      reload: function () { leaving = true; window.location.reload(); }
    };
  }
  if (state.second) { secondMark(); return; }

  function say(text) { status.textContent = text; }

  // ------------------------------------------------------------ what is typed, what is saved
  function typed() {
    const out = {};
    NAMES.forEach(function (n) { out[n] = field(form, n).value; });
    return out;
  }
  function savedFields(s) {
    const out = {};
    NAMES.forEach(function (n) { out[n] = s[n] === null || s[n] === undefined ? "" : String(s[n]); });
    return out;
  }
  function same(a, b) {
    return NAMES.every(function (n) {
      if (n === "adjustment" || n === "override") {
        return a[n] === b[n] || (a[n] !== "" && b[n] !== "" && Number(a[n]) === Number(b[n]))
          || (n === "adjustment" && Number(a[n] || 0) === Number(b[n] || 0));
      }
      return a[n].trim() === b[n].trim();
    });
  }
  function unsaved() { return !same(typed(), savedFields(state)); }
  function fill(values) { NAMES.forEach(function (n) { field(form, n).value = values[n]; }); }
  function keepDraft() {
    if (unsaved()) window.localStorage.setItem(DRAFT, JSON.stringify(typed()));
    else { window.localStorage.removeItem(DRAFT); guard.saved(); }
  }

  // the rubric items as the grader has set them: the stored grade, with the operations
  // sent and not answered yet applied on top (each key toggles what the grader sees)
  let wanted = state.applied.slice();
  let inFlight = 0;
  function pressItems() {
    items.forEach(function (b) {
      b.setAttribute("aria-pressed", wanted.indexOf(b.dataset.item) >= 0 ? "true" : "false");
    });
  }
  // the grade as stored: the fields follow it, but for text typed and not saved yet (a key
  // pressed while a comment is half written keeps the comment), unless ``force``d (a conflict)
  function show(s, force) {
    if (s.version !== undefined && s.version < state.version) return;  // an older reply, late
    const typing = !force && unsaved();
    state = Object.assign(state, s);
    score.textContent = String(Math.round(state.score * 1000) / 1000);
    if (!inFlight) wanted = state.applied.slice();
    pressItems();
    if (!typing) fill(savedFields(state));
    const last = state.version > 0 && !state.stale
      ? "Last change by " + state.grader + " at " + localTime(state.updated_at) + "." : "";
    if (state.kind !== "written") gradedBy.textContent = last;
    else if (state.graded) gradedBy.textContent = "Graded. " + last;
    else if (state.version > 0 && !state.stale) gradedBy.textContent = "Not graded yet: no rubric item "
      + "applied and the grade not saved (save it to give it " + state.score + " points). " + last;
    else gradedBy.textContent = state.pending ? "Not graded yet." : "";
  }

  // the refused change beside the grade that won: nothing typed is dropped
  function refusedText(mine) {
    const theirs = savedFields(state);
    const lost = NAMES.filter(function (n) { return mine[n].trim() !== theirs[n].trim(); });
    if (!lost.length) return;
    const box = document.createElement("div");
    box.className = "refused";
    const heading = document.createElement("p");
    heading.textContent = "Your text, not saved (the fields now show the current grade):";
    box.appendChild(heading);
    lost.forEach(function (n) {
      const label = document.createElement("p");
      label.textContent = n.replace("_", " ") + ":";
      const text = document.createElement("pre");
      text.className = "mine";
      text.textContent = mine[n];
      box.appendChild(label);
      box.appendChild(text);
    });
    const restore = document.createElement("button");
    restore.type = "button";
    restore.textContent = "Put my text back in the fields";
    restore.addEventListener("click", function () { fill(Object.assign(typed(), mine)); keepDraft(); field(form, NAMES[0]).focus(); });
    box.appendChild(restore);
    conflict.appendChild(box);
  }

  function conflictShown(mine, why, theirs) {
    conflict.hidden = false;
    conflict.textContent = why === "answer"
      ? "Conflict: the student handed in a new answer since this page was opened. Your change (" +
        mine + ") was NOT saved. Reload the page to read the new answer and grade it."
      : "Conflict: " + (theirs.grader || "another grader") + " changed this grade at " +
        localTime(theirs.updated_at) + " while you were looking at an older version. Your change (" + mine +
        ") was NOT saved; the page now shows their grade. Apply your change again if it is still right.";
  }

  async function send(url, body, what) {
    const mine = typed();
    inFlight += 1;
    const reply = await post(url, Object.assign({
      assignment: state.assignment, question: state.question, sid: state.sid,
      version: state.version, answer_sha: shownSha
    }, body));
    inFlight -= 1;
    if (reply.status === 200) {
      conflict.hidden = true;
      show(reply.data.state);
      keepDraft();
      say("Saved: " + what + ".");
    } else if (reply.status === 409) {
      if (!inFlight) { wanted = state.applied.slice(); pressItems(); }
      conflictShown(what, reply.data.conflict, reply.data.state);
      if (reply.data.conflict !== "answer") {
        show(reply.data.state, true);
        refusedText(mine);
      }
      say("");
    } else {
      say("");
      conflict.hidden = false;
      conflict.textContent = "Not saved: " + (reply.data.error || ("error " + reply.status));
      if (!inFlight) { wanted = state.applied.slice(); pressItems(); }
    }
  }

  // a click on an item is saved at once, as an operation on the stored grade (apply b,
  // remove c): keys pressed before the last save came back all land.  It decides nothing by
  // itself: an item applied and removed again leaves the answer pending; "Save" decides
  // (0 points included)
  function toggle(item) {
    const at = wanted.indexOf(item);
    if (at >= 0) wanted.splice(at, 1); else wanted.push(item);
    pressItems();
    send("/api/grade", {op: at >= 0 ? "remove" : "apply", item: item},
         (at >= 0 ? "removed " : "applied ") + "item " + item);
  }

  items.forEach(function (b) {
    b.addEventListener("click", function () { toggle(b.dataset.item); });
  });
  if (gradeForm) gradeForm.addEventListener("submit", function (e) {
    e.preventDefault();
    send("/api/grade", {op: "save", comment: field(gradeForm, "comment").value,
                        adjustment: Number(field(gradeForm, "adjustment").value || 0),
                        adjustment_reason: field(gradeForm, "adjustment_reason").value},
         "comment and adjustment");
  });
  if (overrideForm) overrideForm.addEventListener("submit", function (e) {
    e.preventDefault();
    const raw = field(overrideForm, "override").value;
    send("/api/override", {points: raw === "" ? null : Number(raw),
                           reason: field(overrideForm, "override_reason").value}, "override");
  });
  form.addEventListener("input", keepDraft);
  gradeCol.querySelectorAll(":scope > ol.rubric > li > details > form.edit-item").forEach(function (f) {
    f.addEventListener("submit", async function (e) {
      e.preventDefault();
      const reply = await post("/api/rubric", {
        assignment: state.assignment, question: state.question, item: f.dataset.item,
        version: Number(f.dataset.version), points: Number(field(f, "points").value),
        text: field(f, "text").value
      });
      if (reply.status === 200) { guard.reload(); return; }
      conflict.hidden = false;
      conflict.textContent = reply.status === 409
        ? "Conflict: someone changed rubric item " + f.dataset.item + " first; reload the page to see it. Your edit was NOT saved."
        : "Not saved: " + (reply.data.error || ("error " + reply.status));
    });
  });

  // ------------------------------------------------------------ a regrade request's decision
  const regradeSection = gradeCol.querySelector(":scope > section.regrade");
  const regradeForm = regradeSection && regradeSection.querySelector(":scope > form#regrade-form");
  if (regradeSection) regradeSection.querySelectorAll(":scope > p.meta > time[datetime]").forEach(function (t) {
    t.textContent = localTime(t.getAttribute("datetime"));
  });
  function decisionTyped() { return regradeForm ? field(regradeForm, "decision").value.trim() !== "" : false; }
  if (regradeForm) regradeForm.addEventListener("submit", async function (e) {
    e.preventDefault();
    const outcome = regradeForm.querySelector('input[name="outcome"]:checked').value;
    const body = {assignment: state.assignment, question: state.question, sid: state.sid,
                  version: state.version, answer_sha: shownSha, request: Number(regradeForm.dataset.request),
                  outcome: outcome, decision: field(regradeForm, "decision").value};
    if (state.kind === "written") {
      body.applied = [];
      regradeForm.querySelectorAll(':scope > fieldset > label > input[name="item"]').forEach(function (c) {
        if (c.checked) body.applied.push(c.value);
      });
    } else body.points = Number(field(regradeForm, "points").value);
    decided(await post("/api/regrade", body), "the regrade decision");
  });

  // a decision's reply: the page again once it is taken, else the conflict or the error
  function decided(reply, what) {
    if (reply.status === 200) { guard.reload(); return; }
    if (reply.status === 409) {
      conflictShown(what, reply.data.conflict, reply.data.state);
      if (reply.data.conflict !== "answer") show(reply.data.state, true);
    } else {
      conflict.hidden = false;
      conflict.textContent = "Not saved: " + (reply.data.error || ("error " + reply.status));
    }
  }

  // ------------------------------------------------------------ two blind marks that differ
  const doubleForm = gradeCol.querySelector(":scope > section.double > form#double-form");
  if (doubleForm) doubleForm.addEventListener("submit", async function (e) {
    e.preventDefault();
    const keep = e.submitter && e.submitter.value;
    if (keep !== "first" && keep !== "second") return;
    const reply = await post("/api/double-mark", {
      assignment: state.assignment, question: state.question, sid: state.sid,
      version: state.version, answer_sha: shownSha, keep: keep});
    if (reply.status === 409 && reply.data.conflict === "resolved") {
      conflict.hidden = false;
      conflict.textContent = "Conflict: another grader resolved this disagreement first. Your " +
        "decision was NOT saved; reload the page to see the grade.";
    } else decided(reply, "the decision on the two marks");
  });

  // ------------------------------------------------------------ leaving the answer
  const guard = guardLeaving(function () { return unsaved() || decisionTyped(); },
    "You typed text that is not saved. Save it (Ctrl+Enter), or go on (press the key or click " +
    "again): it stays here as a draft for this answer, not saved.");
  const leave = guard.go;
  const links = {n: pager.querySelector(":scope > a#next"), p: pager.querySelector(":scope > a#previous"),
                 u: pager.querySelector(":scope > a#next-ungraded")};
  Object.keys(links).forEach(function (k) {
    if (links[k]) links[k].addEventListener("click", function (e) { e.preventDefault(); leave(links[k].href); });
  });

  document.addEventListener("keydown", function (e) {
    const tag = (e.target && e.target.tagName) || "";
    const typing = tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
    const otherForm = e.target && e.target.form && e.target.form !== form;  // a rubric item's edit
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !otherForm) {
      e.preventDefault();
      if (typing) e.target.blur();  // the next key is a shortcut again (c, Ctrl+Enter, n: no "n" typed)
      form.requestSubmit();
      return;
    }
    if (e.key === "Escape" && typing) { e.target.blur(); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "n" || e.key === "p" || e.key === "u") {
      if (links[e.key]) leave(links[e.key].href);
    } else if (e.key === "c") {
      e.preventDefault();
      field(form, NAMES[0]).focus();
    } else if (/^[1-9]$/.test(e.key)) {
      const b = items[Number(e.key) - 1];
      if (b) { e.preventDefault(); toggle(b.dataset.item); }
    }
  });

  show(state, true);
  const draft = JSON.parse(window.localStorage.getItem(DRAFT) || "null");
  if (draft && NAMES.every(function (n) { return typeof draft[n] === "string"; })) {
    fill(draft);
    if (unsaved()) {
      unsavedBox.hidden = false;
      unsavedBox.textContent = "Restored the text you typed here before and did not save: it is not saved yet.";
    } else window.localStorage.removeItem(DRAFT);
  }

  // a blind second mark: the first is not on this page; the items are marked here and saved
  // together, changing no grade
  function secondMark() {
    const items = gradeCol.querySelectorAll(":scope > ol.rubric > li > button.item");
    const secondForm = gradeCol.querySelector(":scope > form#second-form");
    let marked = false;  // marks made and not saved yet
    const guard = guardLeaving(function () { return marked; }, "Your second mark is not saved. " +
      "Save it, or go on (press the key or click again) and it is lost.");
    function flip(b) {
      b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true");
      marked = true;
    }
    field(secondForm, "adjustment").addEventListener("input", function () { marked = true; });
    items.forEach(function (b) { b.addEventListener("click", function () { flip(b); }); });
    secondForm.addEventListener("submit", async function (e) {
      e.preventDefault();
      const applied = [];
      items.forEach(function (b) { if (b.getAttribute("aria-pressed") === "true") applied.push(b.dataset.item); });
      const reply = await post("/api/second-mark", {
        assignment: state.assignment, question: state.question, sid: state.sid, answer_sha: shownSha,
        applied: applied, adjustment: Number(field(secondForm, "adjustment").value || 0)
      });
      if (reply.status === 200) {
        conflict.hidden = true; marked = false; guard.saved();
        say("Saved: second mark."); return;
      }
      conflict.hidden = false;
      conflict.textContent = reply.status === 409
        ? "Conflict: the student handed in a new answer since this page was opened; your mark was NOT saved."
        : "Not saved: " + (reply.data.error || ("error " + reply.status));
    });
    const links = {n: pager.querySelector(":scope > a#next"), p: pager.querySelector(":scope > a#previous"),
                   u: pager.querySelector(":scope > a#next-ungraded")};
    Object.keys(links).forEach(function (k) {
      if (links[k]) links[k].addEventListener("click", function (e) { e.preventDefault(); guard.go(links[k].href); });
    });
    document.addEventListener("keydown", function (e) {
      const tag = (e.target && e.target.tagName) || "";
      if (tag === "INPUT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (links[e.key]) guard.go(links[e.key].href);
      else if (/^[1-9]$/.test(e.key) && items[Number(e.key) - 1]) { e.preventDefault(); flip(items[Number(e.key) - 1]); }
    });
  }
})();
