// prb compare report: sortable tables and a lazy pair browser.
// Every piece of data is inserted with textContent, never parsed as HTML.
(function () {
  "use strict";

  // ---------------------------------------------------------------- sortable tables
  function cellKey(td) {
    if (!td) return { num: -Infinity, text: "" };
    var raw = td.getAttribute("data-sort");
    if (raw !== null && raw !== "" && !isNaN(Number(raw))) return { num: Number(raw), text: null };
    return { num: null, text: td.textContent };
  }

  function sortTable(th) {
    var table = th.closest("table");
    var tbody = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(tbody.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a.cells[col]), y = cellKey(b.cells[col]);
      var c;
      if (x.num !== null || y.num !== null) {
        c = (x.num === null ? -Infinity : x.num) - (y.num === null ? -Infinity : y.num);
      } else {
        c = x.text.localeCompare(y.text, undefined, { numeric: true });
      }
      return ascending ? c : -c;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
  }

  document.querySelectorAll("table.sortable th").forEach(function (th) {
    th.addEventListener("click", function () { sortTable(th); });
  });

  // ---------------------------------------------------------------- pair browser
  var PAGE = 50;
  var data = null;      // parsed on first use
  var shown = [];       // pair indices passing the filters
  var page = 0;
  var byModel = {};     // model id -> {pair index -> [score, detail]}

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function load() {
    if (data) return data;
    data = JSON.parse(document.getElementById("prb-data").textContent);
    data.models.forEach(function (m) {
      var map = {};
      (data.res[m.id] || []).forEach(function (row) { map[row[0]] = row; });
      byModel[m.id] = map;
    });
    var sectionSelect = document.getElementById("f-section");
    data.sections.forEach(function (s) {
      var o = el("option", s.title); o.value = s.slug; sectionSelect.appendChild(o);
    });
    var subsets = {};
    data.pairs.forEach(function (p) { subsets[p.s] = true; });
    var subsetSelect = document.getElementById("f-subset");
    Object.keys(subsets).sort().forEach(function (s) {
      var o = el("option", s); o.value = s; subsetSelect.appendChild(o);
    });
    return data;
  }

  function activeModels() {
    var slug = document.getElementById("f-section").value;
    return data.models.filter(function (m) { return !slug || m.section === slug; });
  }

  function symbol(score) {
    if (score === undefined) return ["", ""];
    if (score >= 1) return ["✓", "res-1"];
    if (score <= 0) return ["✗", "res-0"];
    return ["½", "res-h"];
  }

  function applyFilters() {
    load();
    var models = activeModels();
    var subset = document.getElementById("f-subset").value;
    var disagree = document.getElementById("f-disagree").checked;
    var wrong = document.getElementById("f-wrong").checked;
    var text = document.getElementById("f-text").value.trim().toLowerCase();
    shown = [];
    data.pairs.forEach(function (p, i) {
      if (subset && p.s !== subset) return;
      var scores = [];
      models.forEach(function (m) { var r = byModel[m.id][i]; if (r) scores.push(r[1]); });
      if (!scores.length) return;
      if (disagree && scores.every(function (s) { return s === scores[0]; })) return;
      if (wrong && scores.every(function (s) { return s >= 1; })) return;
      if (text) {
        var hay = [p.k, p.c || "", p.q || "", p.u || "", (p.t || []).join(" ")].join(" ").toLowerCase();
        if (hay.indexOf(text) < 0) return;
      }
      shown.push(i);
    });
    page = 0;
    renderList();
  }

  function renderList() {
    var models = activeModels();
    var table = document.getElementById("pair-list");
    var head = table.tHead, body = table.tBodies[0];
    head.textContent = ""; body.textContent = "";
    var tr = el("tr");
    ["pair", "subset", "category"].forEach(function (h) { tr.appendChild(el("th", h)); });
    models.forEach(function (m) {
      var th = el("th", m.short || m.label); th.title = m.label + " (" + m.kind + ")"; tr.appendChild(th);
    });
    head.appendChild(tr);
    var start = page * PAGE;
    shown.slice(start, start + PAGE).forEach(function (i) {
      var p = data.pairs[i];
      var row = el("tr");
      row.appendChild(el("td", p.k)); row.appendChild(el("td", p.s)); row.appendChild(el("td", p.c || ""));
      models.forEach(function (m) {
        var r = byModel[m.id][i]; var s = symbol(r ? r[1] : undefined);
        row.appendChild(el("td", s[0], s[1]));
      });
      row.addEventListener("click", function () { showPair(i); });
      body.appendChild(row);
    });
    var last = Math.min(start + PAGE, shown.length);
    document.getElementById("f-count").textContent =
      shown.length ? (start + 1) + "-" + last + " of " + shown.length + " pairs" : "no pairs match";
  }

  function section(parent, title, cls) {
    var div = el("div", null, cls); if (title) div.appendChild(el("h4", title)); parent.appendChild(div); return div;
  }

  function showPair(i) {
    load();
    var p = data.pairs[i];
    var box = document.getElementById("pair-detail");
    box.textContent = "";
    box.hidden = false;
    var close = el("button", "close ✕", "close");
    close.type = "button";
    close.addEventListener("click", function () { box.hidden = true; });
    box.appendChild(close);
    box.appendChild(el("h3", "Pair " + p.k));
    var meta = ["subset " + p.s, p.c ? "category " + p.c : null, p.u ? "user " + p.u : null,
                p.t && p.t.length ? "tags " + p.t.join(", ") : null, "data: " + p.src];
    box.appendChild(el("p", meta.filter(Boolean).join(" · "), "muted"));
    if (p.q) { box.appendChild(el("h4", "Question")); box.appendChild(el("div", p.q, "box")); }
    if (p.ch !== null && p.ch !== undefined) {
      var grid = el("div", null, "resp");
      var c = el("div", null); c.appendChild(el("h4", "Chosen (what this user prefers)")); c.appendChild(el("div", p.ch, "box chosen"));
      var r = el("div", null); r.appendChild(el("h4", "Rejected")); r.appendChild(el("div", p.rj, "box rejected"));
      grid.appendChild(c); grid.appendChild(r); box.appendChild(grid);
    }
    if (p.dem && p.dem.length) {
      box.appendChild(el("h4", "The user's demographics"));
      var dd = el("dl", null, "demo");
      p.dem.forEach(function (kv) { dd.appendChild(el("dt", kv[0])); dd.appendChild(el("dd", kv[1])); });
      box.appendChild(dd);
    }
    if (p.why) {
      var why = el("div", null, "standard");
      why.appendChild(el("h4", "The user's reason for this preference: the scoring standard (never shown to models)"));
      why.appendChild(el("div", p.why));
      box.appendChild(why);
    }
    if (p.p) {
      // Everything the model was shown: the profile posts, earlier choices or demographics it read.
      var shownTo = el("details", null, "shown");
      if (p.ch === null || p.ch === undefined) shownTo.open = true;
      shownTo.appendChild(el("summary", "What the model was shown (the prompt as sent; chosen response in position " +
        (p.pc || "?") + ")"));
      shownTo.appendChild(el("pre", p.p, "completion"));
      box.appendChild(shownTo);
    }
    if (p.a && p.a.length) {
      var std = el("div", null, "standard");
      std.appendChild(el("h4", "The user's rubric aspects: the scoring standard (never shown to models, except in oracle tasks)"));
      var dl = el("dl");
      p.a.forEach(function (a) {
        dl.appendChild(el("dt", a[0]));
        dl.appendChild(el("dd", "Evidence: " + a[1]));
        dl.appendChild(el("dd", "Reason: " + a[2]));
      });
      std.appendChild(dl); box.appendChild(std);
    }
    data.models.forEach(function (m) {
      var row = byModel[m.id][i];
      if (!row) return;
      var block = section(box, m.label + " · " + (m.kind === "judge" ? "judge" : "scalar RM") + " · " + m.family, "model " + m.kind);
      if (m.kind === "scalar") {
        var sc = row[2];
        block.appendChild(el("p", "score chosen " + sc[0] + ", rejected " + sc[1] + ": " +
          (sc[0] > sc[1] ? "right" : sc[0] === sc[1] ? "tie (counts wrong)" : "wrong")));
        return;
      }
      row[2].forEach(function (j) {
        var verdict = j[1] ? "verdict " + j[1] : "no verdict (" + j[2] + ")";
        block.appendChild(el("p", "chosen shown as " + (j[0] || "?") + " · " + verdict + " · " + (j[3] ? "right" : "wrong"),
          j[3] ? "res-1" : "res-0"));
        block.appendChild(el("pre", j[4], "completion"));
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll("#pair-list tbody tr"), function (tr) {
      tr.classList.toggle("current", tr.firstChild && tr.firstChild.textContent === p.k);
    });
    box.scrollTop = 0;
  }

  ["f-section", "f-subset", "f-disagree", "f-wrong"].forEach(function (id) {
    document.getElementById(id).addEventListener("change", applyFilters);
  });
  document.getElementById("f-text").addEventListener("input", applyFilters);
  document.getElementById("f-prev").addEventListener("click", function () {
    if (page > 0) { page -= 1; renderList(); }
  });
  document.getElementById("f-next").addEventListener("click", function () {
    if ((page + 1) * PAGE < shown.length) { page += 1; renderList(); }
  });

  // The list is built when the reader reaches it (or asks for a pair in the URL).
  // #pair=KEY opens one pair; #disagree lists only the pairs where models disagree.
  function openFromHash() {
    if (location.hash === "#disagree") {
      document.getElementById("f-disagree").checked = true;
      applyFilters();
      return;
    }
    var match = /^#pair=(.*)$/.exec(location.hash);
    if (!match) return;
    applyFilters();
    var key = decodeURIComponent(match[1]);
    for (var i = 0; i < data.pairs.length; i++) {
      if (data.pairs[i].k === key) { showPair(i); return; }
    }
  }
  var pairs = document.getElementById("pairs");
  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(function (items) {
      if (items.some(function (x) { return x.isIntersecting; })) { seen.disconnect(); if (!data) applyFilters(); }
    });
    seen.observe(pairs);
  } else {
    applyFilters();
  }
  window.addEventListener("hashchange", openFromHash);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") document.getElementById("pair-detail").hidden = true;
  });
  openFromHash();
})();
