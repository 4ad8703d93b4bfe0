// The answer groups page (templates/groups.html): grade a group, split answers off, merge
// groups, or walk through a group's answers one at a time with the group's rubric items
// applied: "y" confirms the grade of the answer on screen (saved at once, with the version
// and the hash of the answer shown), "n" sets it apart (split off when the walk ends),
// Escape stops.  app.js hands this file its `post` (change key and XSRF token) through the
// "lecturelib:groups" event, once the page is loaded; every element is found by its place
// in the page's own structure, never by a document-wide lookup that an answer could answer.
"use strict";
(function () {
  document.addEventListener("lecturelib:groups", function (event) {
    const post = event.detail.post, where = event.detail.where, main = event.detail.main;
    const status = main.querySelector(":scope > #status");
    const conflict = main.querySelector(":scope > #conflict");
    let walking = null;

    function refused(reply) {
      conflict.hidden = false;
      conflict.textContent = reply.status === 409 && reply.data.conflict === "graded"
        ? "Conflict: someone graded an answer of this group since this page was opened. Nothing was saved; reload the page to see the grades."
        : reply.status === 409
        ? "Conflict: the group or an answer changed since this page was opened (an answer handed in again, a grade, a split or a merge). Nothing more was saved; reload the page."
        : "Not saved: " + (reply.data.error || ("error " + reply.status));
    }
    async function change(body, what) {
      const reply = await post("/api/groups", Object.assign({assignment: where.assignment, question: where.question}, body));
      if (reply.status === 200) { status.textContent = "Saved: " + what + "."; window.location.reload(); return true; }
      refused(reply);
      return false;
    }

    main.querySelectorAll(":scope > section.group").forEach(function (section) {
      const number = Number(section.dataset.group);
      const splitForm = section.querySelector(":scope > .columns > div > form.split-form");
      const gradeForm = section.querySelector(":scope > .columns > form.group-grade");
      const boxes = splitForm.querySelectorAll(':scope > ul > li > p.meta > label > input[name="split"]');
      const members = {}, versions = {};
      boxes.forEach(function (c) { members[c.value] = c.dataset.sha; versions[c.value] = Number(c.dataset.version); });
      function grading() {
        const applied = [];
        gradeForm.querySelectorAll(':scope > fieldset > label > input[name="item"]').forEach(function (c) { if (c.checked) applied.push(c.value); });
        return {applied: applied, comment: gradeForm.elements.namedItem("comment").value,
                adjustment: Number(gradeForm.elements.namedItem("adjustment").value || 0),
                adjustment_reason: gradeForm.elements.namedItem("adjustment_reason").value};
      }
      gradeForm.addEventListener("submit", function (e) {
        e.preventDefault();
        change(Object.assign({action: "grade", group: number, members: members, versions: versions}, grading()),
               "group " + number + " graded");
      });
      splitForm.addEventListener("submit", function (e) {
        e.preventDefault();
        const sids = [];
        boxes.forEach(function (c) { if (c.checked) sids.push(c.value); });
        change({action: "split", sids: sids}, "answers split off");
      });
      const walkButton = gradeForm.querySelector(":scope > button.walk");
      const walkStatus = gradeForm.querySelector(":scope > output.walk-status");
      walkButton.addEventListener("click", function () {
        if (walking) walking.stop();
        walking = walk(section, boxes, grading(), walkStatus);
      });
    });

    // one group's members, one after another: the answer on screen is the current one
    function walk(section, boxes, grade, out) {
      const items = Array.prototype.slice.call(boxes).map(function (c) { return {box: c, li: c.closest("li.member")}; });
      const apart = [];
      let at = 0, busy = false;
      function show() {
        items.forEach(function (m, i) { m.li.classList.toggle("current", i === at); });
        if (at >= items.length) { finish(); return; }
        const m = items[at];
        m.li.scrollIntoView({block: "start"});
        m.li.querySelector(":scope > div.answer").focus({preventScroll: true});
        const label = m.li.querySelector(":scope > p.meta > a").textContent;
        out.textContent = "Answer " + (at + 1) + " of " + items.length + " (" + label + "), items " +
          (grade.applied.join(", ") || "none") + ": y confirms this grade, n sets the answer apart, Escape stops.";
      }
      async function confirm() {
        const m = items[at];
        busy = true;
        const reply = await post("/api/grade", Object.assign({assignment: where.assignment, question: where.question,
          sid: m.box.value, version: Number(m.box.dataset.version), answer_sha: m.box.dataset.sha}, grade));
        busy = false;
        if (reply.status !== 200) { refused(reply); stop(); return; }
        m.li.classList.add("confirmed");
        at += 1;
        show();
      }
      async function finish() {
        stop();
        if (apart.length) { await change({action: "split", sids: apart}, apart.length + " answer(s) set apart"); return; }
        status.textContent = "Saved: every answer of the group confirmed.";
        window.location.reload();
      }
      function key(e) {
        const tag = (e.target && e.target.tagName) || "";
        if (busy || at >= items.length || tag === "INPUT" || tag === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
        if (e.key === "y") { e.preventDefault(); confirm(); }
        else if (e.key === "n") { e.preventDefault(); apart.push(items[at].box.value); items[at].li.classList.add("apart"); at += 1; show(); }
        else if (e.key === "Escape") { stop(); out.textContent = "Walk stopped."; }
      }
      function stop() {
        document.removeEventListener("keydown", key);
        items.forEach(function (m) { m.li.classList.remove("current"); });
        walking = null;
      }
      document.addEventListener("keydown", key);
      show();
      return {stop: stop};
    }

    const mergeForm = main.querySelector(":scope > form#merge-form");
    mergeForm.addEventListener("submit", function (e) {
      e.preventDefault();
      const numbers = [];
      main.querySelectorAll(":scope > section.group > label.pick > input.merge").forEach(function (c) { if (c.checked) numbers.push(Number(c.value)); });
      change({action: "merge", groups: numbers}, "groups merged");
    });
  });
})();
