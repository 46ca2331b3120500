// The game review page's board: turn-by-turn navigation, dice, scoresheets and charts, drawn from the
// JSON in #review-data (harness/review.py writes both). No network, no library.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("review-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f6feb", "#cf222e", "#1a7f37", "#8250df", "#d1600f", "#0a7e8c", "#6e5849", "#bf3989"];
  var CLASS_COLOR = {inaccuracy: "#bf8700", mistake: "#d1600f", blunder: "#a40e26"};
  var PIPS = {1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]], 4: [[1, 1], [3, 1], [1, 3], [3, 3]],
              5: [[1, 1], [3, 1], [2, 2], [1, 3], [3, 3]], 6: [[1, 1], [3, 1], [1, 2], [3, 2], [1, 3], [3, 3]]};
  var turns = D.turns, steps = D.steps, seats = D.seats, nSeats = seats.length;
  var cur = 0;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fix(x, nd) { return x === null || x === undefined ? "–" : x.toFixed(nd); }
  function signed(x, nd) { return (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(nd); }
  function pc(x) { return x === null || x === undefined ? "–" : (100 * x).toFixed(1) + " %"; }
  function color(s) { return COLORS[s % COLORS.length]; }

  function die(face, kept) {
    var s = sv("svg", {viewBox: "0 0 40 40", role: "img", "aria-label": face + (kept ? " kept" : "")});
    s.appendChild(sv("rect", {x: 2, y: 2, width: 36, height: 36, rx: 7, fill: kept ? "#fff7d6" : "#fff",
                              stroke: kept ? "#bf8700" : "#8c959f", "stroke-width": kept ? 3 : 1.5}));
    PIPS[face].forEach(function (p) {
      s.appendChild(sv("circle", {cx: 2 + p[0] * 9, cy: 2 + p[1] * 9, r: 3.6, fill: "#1d232b"}));
    });
    var t = sv("title", {}); t.textContent = face + (kept ? " (kept)" : ""); s.appendChild(t);
    return s;
  }

  function badge(cls) { return el("span", {"class": "badge " + cls}, cls); }

  // -- the turn -------------------------------------------------------------------------------------
  function turnLabel(t) {
    return seats[t.seat].label + (D.columns > 1 ? " · column " + t.column : "") + " · turn " + t.turn;
  }
  function renderTurn() {
    var box = document.getElementById("turn");
    box.textContent = "";
    var nav = el("div", {"class": "nav"});
    [["«", 0, "first turn (Home)"], ["‹ prev", cur - 1, "previous turn (←)"],
     ["next ›", cur + 1, "next turn (→)"], ["»", turns.length - 1, "last turn (End)"]].forEach(function (b) {
      var btn = el("button", {type: "button", title: b[2], "aria-label": b[2]}, b[0]);
      btn.disabled = b[1] < 0 || b[1] >= turns.length || b[1] === cur;
      btn.addEventListener("click", function () { go(b[1]); });
      nav.appendChild(btn);
    });
    nav.appendChild(el("span", {"class": "pos"}, "Turn " + (cur + 1) + " of " + turns.length));
    box.appendChild(nav);
    var t = turns[cur];
    var card = el("div", {"class": "card", id: "turn-card", style: "--seat:" + color(t.seat)});
    var who = el("div", {"class": "who"}, turnLabel(t) + " ");
    who.appendChild(el("small", {}, "(seat " + t.seat + ")"));
    card.appendChild(who);
    t.rolls.forEach(function (dice, i) {
      var row = el("div", {"class": "roll"});
      row.appendChild(el("span", {"class": "n"}, "Roll " + (i + 1)));
      var ds = el("span", {"class": "dice"});
      dice.forEach(function (f, j) { ds.appendChild(die(f, t.kept[i][j])); });
      row.appendChild(ds);
      var l = t.luck[i];
      row.appendChild(el("span", {"class": "luck " + (l > 0.005 ? "up" : l < -0.005 ? "down" : ""),
                                  title: "luck: the value after the roll minus its expectation before it"},
                         "luck " + signed(l, 2)));
      card.appendChild(row);
      t.decisions.filter(function (d) { return d.roll === i + 1; }).forEach(function (d) {
        var line = el("div", {"class": "dec"});
        line.appendChild(el("span", {"class": "k"}, d.kind === "box" ? "box " + d.chosen : d.chosen));
        line.appendChild(el("span", {"class": "v"}, "value " + fix(d.value, 2)));
        if (d["class"] !== "best") {
          line.appendChild(el("span", {}, "best " + d.best + " "));
          line.lastChild.appendChild(el("span", {"class": "v"}, "(" + fix(d.best_value, 2) + ")"));
          line.appendChild(el("span", {"class": "v"}, "regret " + fix(d.regret, 2)));
        }
        line.appendChild(badge(d["class"]));
        card.appendChild(line);
      });
    });
    var bl = el("div", {"class": "boxline"});
    bl.appendChild(document.createTextNode("→ "));
    bl.appendChild(el("b", {}, t.box + " " + t.score));
    var more = [];
    if (t.bonus) more.push("upper bonus +" + t.bonus);
    if (t.extra) more.push("extra bonus +" + t.extra);
    bl.appendChild(document.createTextNode((more.length ? " (" + more.join(", ") + ")" : "") +
                                           " · sheet " + t.total + " points"));
    card.appendChild(bl);
    box.appendChild(card);
  }

  // -- the scoresheets ------------------------------------------------------------------------------
  function renderSheet() {
    var box = document.getElementById("sheet");
    box.textContent = "";
    var cells = {}, sums = {};  // "seat/column" -> {box: [score, turn index]}, last turn's sheet
    for (var i = 0; i <= cur; i++) {
      var t = turns[i], key = t.seat + "/" + t.column;
      (cells[key] = cells[key] || {})[t.box] = [t.score, i];
      sums[key] = {upper: t.upper, bonus: ((sums[key] || {}).bonus || 0) + t.bonus,
                   extra: ((sums[key] || {}).extra || 0) + t.extra, total: t.total};
    }
    var cols = [];
    seats.forEach(function (s, si) { for (var c = 1; c <= D.columns; c++) cols.push([si, c]); });
    var wrap = el("div", {"class": "wide"});
    var tab = el("table", {"class": "sheet", id: "sheet-table"});
    var hr = el("tr", {});
    hr.appendChild(el("th", {}, "box"));
    cols.forEach(function (sc) {
      var name = seats[sc[0]].label + (D.columns > 1 ? " " + sc[1] : "");
      var th = el("th", {"class": "num seat", style: "--seat:" + color(sc[0]), title: name});
      th.appendChild(el("span", {"class": "name"}, name));
      hr.appendChild(th);
    });
    tab.appendChild(hr);
    function row(label, fn, cls) {
      var tr = el("tr", cls ? {"class": cls} : {});
      tr.appendChild(el("th", {}, label));
      cols.forEach(function (sc) {
        var v = fn(sc[0] + "/" + sc[1], sc);
        var td = el("td", {"class": "num" + (v[1] ? " " + v[1] : "")}, v[0]);
        tr.appendChild(td);
      });
      tab.appendChild(tr);
    }
    var upperDone = false;
    D.boxes.forEach(function (b) {
      if (!b.upper && !upperDone) {
        upperDone = true;
        row("upper", function (k) { return [sums[k] ? String(sums[k].upper) : "0", ""]; }, "sum");
        if (D.bonus) row("bonus (" + D.threshold + ")", function (k) {
          return [sums[k] && sums[k].bonus ? String(sums[k].bonus) : "–", ""];
        }, "sum");
      }
      row(b.label, function (k) {
        var c = (cells[k] || {})[b.name];
        return c ? [String(c[0]), c[1] === cur ? "now" : ""] : ["·", "open"];
      });
    });
    if (Object.keys(sums).some(function (k) { return sums[k].extra; }))
      row("extra bonus", function (k) { return [sums[k] ? String(sums[k].extra) : "0", ""]; }, "sum");
    row("total", function (k) { return [sums[k] ? String(sums[k].total) : "0", ""]; }, "sum");
    var last = steps[turns[cur].steps[1]];
    var tr = el("tr", {"class": "sum"});
    tr.appendChild(el("th", {}, "expected final"));
    seats.forEach(function (s, si) {
      tr.appendChild(el("td", {"class": "num", colspan: D.columns}, fix(last.expected[si], 1)));
    });
    tab.appendChild(tr);
    if (last.win) {
      tr = el("tr", {"class": "sum"});
      tr.appendChild(el("th", {}, "chance to win"));
      seats.forEach(function (s, si) {
        tr.appendChild(el("td", {"class": "num", colspan: D.columns}, pc(last.win[si])));
      });
      tab.appendChild(tr);
    }
    wrap.appendChild(tab);
    box.appendChild(wrap);
  }

  // -- the charts -----------------------------------------------------------------------------------
  function chart(id, key, lo, hi, ticks, fmtTick, marks) {
    var host = document.getElementById(id);
    if (!host) return;
    host.textContent = "";
    var W = Math.max(300, host.clientWidth || 800), H = W < 560 ? 190 : 240;
    var L = 44, R = 10, T = 10, B = 24, n = steps.length;
    function X(i) { return L + (W - L - R) * i / Math.max(1, n - 1); }
    function Y(v) { return T + (H - T - B) * (1 - (v - lo) / (hi - lo || 1)); }
    var s = sv("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                       "aria-label": id.replace("-", " ")});
    var t = turns[cur];
    s.appendChild(sv("rect", {x: X(t.steps[0]) - 2, y: T, width: Math.max(4, X(t.steps[1]) - X(t.steps[0]) + 4),
                              height: H - T - B, fill: "#fff1b8", "class": "here"}));
    ticks.forEach(function (v) {
      s.appendChild(sv("line", {x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: "#e6e9ed"}));
      var tx = sv("text", {x: L - 6, y: Y(v) + 4, "text-anchor": "end"}); tx.textContent = fmtTick(v);
      s.appendChild(tx);
    });
    var every = Math.max(1, Math.ceil(D.boxes.length * D.columns / (W < 560 ? 5 : 10)));
    turns.forEach(function (tt, i) {
      if (tt.seat !== 0) return;
      var round = (tt.column - 1) * D.boxes.length + tt.turn;
      if ((round - 1) % every) return;
      var x = X(tt.steps[0]);
      s.appendChild(sv("line", {x1: x, x2: x, y1: T, y2: H - B, stroke: "#eef0f3"}));
      var tx = sv("text", {x: x, y: H - 8, "text-anchor": "middle"}); tx.textContent = String(round);
      s.appendChild(tx);
    });
    seats.forEach(function (seat, si) {
      var pts = steps.map(function (st, i) { return X(i).toFixed(1) + "," + Y(st[key][si]).toFixed(1); });
      s.appendChild(sv("polyline", {points: pts.join(" "), fill: "none", stroke: color(si), "stroke-width": 2,
                                    "stroke-linejoin": "round"}));
    });
    (marks || []).forEach(function (m) { s.appendChild(m(X, Y)); });
    s.addEventListener("click", function (ev) {
      var r = s.getBoundingClientRect();
      var x = (ev.clientX - r.left) * W / r.width;
      var i = Math.round((x - L) / (W - L - R) * (n - 1));
      i = Math.min(n - 1, Math.max(1, i));
      go(steps[i].turn);
    });
    host.appendChild(s);
    var leg = el("div", {"class": "legend"});
    seats.forEach(function (seat, si) { leg.appendChild(el("span", {style: "--c:" + color(si)}, seat.label)); });
    host.appendChild(leg);
  }

  function tip(node, text) { var t = sv("title", {}); t.textContent = text; node.appendChild(t); return node; }

  function expectedMarks(small) {
    var k = small ? 0.7 : 1, out = [];
    steps.forEach(function (st, i) {
      if (st.seat < 0) return;
      var v = st.expected[st.seat];
      if (st.kind === "roll" && Math.abs(st.luck) >= 0.5) {
        out.push(function (X, Y) {
          var up = st.luck > 0, r = k * Math.min(9, 2.5 + Math.sqrt(Math.abs(st.luck)));
          var x = X(i), y = Y(v);
          var d = up ? -1 : 1;  // the triangle points up for good luck, down for bad
          var p = [x, y + d * r, x - r, y - d * r * 0.8, x + r, y - d * r * 0.8];
          return tip(sv("polygon", {points: p.join(" "), fill: up ? "#1a7f37" : "#cf222e", opacity: 0.75,
                                    "class": "luck-mark"}),
                     st.text + " · luck " + signed(st.luck, 2));
        });
      } else if (st.regret !== undefined && CLASS_COLOR[st["class"]]) {
        out.push(function (X, Y) {
          var r = k * (st["class"] === "blunder" ? 6 : st["class"] === "mistake" ? 5 : 4), x = X(i), y = Y(v);
          return tip(sv("rect", {x: x - r, y: y - r, width: 2 * r, height: 2 * r, fill: CLASS_COLOR[st["class"]],
                                 transform: "rotate(45 " + x + " " + y + ")", "class": "regret-mark"}),
                     st.text + " · regret " + fix(st.regret, 2) + " (" + st["class"] + ")");
        });
      }
    });
    return out;
  }

  function winMarks() {
    return D.moments.map(function (m, j) {
      return function (X, Y) {
        var st = steps[m.step], g = sv("g", {"class": "moment-mark"});
        g.appendChild(sv("circle", {cx: X(m.step), cy: Y(m.after), r: 7, fill: "none", stroke: color(m.seat),
                                    "stroke-width": 2}));
        var ty = Y(m.after) < 24 ? Y(m.after) + 20 : Y(m.after) - 10;  // below the ring at the top
        var tx = sv("text", {x: X(m.step), y: ty, "text-anchor": "middle", style: "font-weight:700"});
        tx.textContent = String(j + 1);
        g.appendChild(tx);
        return tip(g, (j + 1) + ". " + st.text + " · " + pc(m.before) + " → " + pc(m.after));
      };
    });
  }

  function renderCharts() {
    var lo = Infinity, hi = -Infinity;
    steps.forEach(function (st) { st.expected.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
    var span = Math.max(10, hi - lo), stepTick = span > 200 ? 50 : span > 80 ? 25 : 10;
    lo = Math.floor((lo - span * 0.05) / stepTick) * stepTick;
    hi = Math.ceil((hi + span * 0.05) / stepTick) * stepTick;
    var ticks = [];
    for (var v = lo; v <= hi + 1e-9; v += stepTick) ticks.push(v);
    var host = document.getElementById("expected-chart");
    chart("expected-chart", "expected", lo, hi, ticks, function (v) { return String(v); },
          expectedMarks(host && host.clientWidth < 560));
    if (steps[0].win) chart("win-chart", "win", 0, 1, [0, 0.25, 0.5, 0.75, 1],
                            function (v) { return (100 * v) + "%"; }, winMarks());
  }

  // -- tables and navigation ------------------------------------------------------------------------
  function hookRows(sectionId, turnOf) {
    var sec = document.getElementById(sectionId);
    if (!sec) return;
    var rows = sec.querySelectorAll("tr");
    for (var r = 1; r < rows.length; r++) {
      (function (tr, k) {
        var t = turnOf(k);
        if (t === undefined || t < 0) return;
        tr.setAttribute("data-turn", String(t));
        tr.setAttribute("tabindex", "0");
        tr.addEventListener("click", function () { go(t); });
        tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") go(t); });
      })(rows[r], r - 1);
    }
  }
  function markRows() {
    var rows = document.querySelectorAll("tr[data-turn]");
    for (var i = 0; i < rows.length; i++) {
      rows[i].classList.toggle("here", Number(rows[i].getAttribute("data-turn")) === cur);
    }
  }

  function go(k) {
    if (k === undefined || isNaN(k)) return;
    cur = Math.min(turns.length - 1, Math.max(0, k));
    renderTurn();
    renderSheet();
    renderCharts();
    markRows();
    try { history.replaceState(null, "", "#turn=" + (cur + 1)); } catch (e) { /* a page without history */ }
    document.body.setAttribute("data-turn", String(cur));
  }

  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var to = {ArrowRight: cur + 1, ArrowLeft: cur - 1, Home: 0, End: turns.length - 1}[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    go(to);
  });
  var resized = null;
  window.addEventListener("resize", function () {
    clearTimeout(resized);
    resized = setTimeout(renderCharts, 120);
  });

  document.getElementById("board").classList.toggle("many", nSeats * D.columns > 2);
  hookRows("decisions", function (k) { return D.decisions[k]; });
  hookRows("moments", function (k) { return D.moments[k] === undefined ? undefined : steps[D.moments[k].step].turn; });
  function fromHash() {
    var m = /turn=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) - 1 : 0;
  }
  window.addEventListener("hashchange", function () { if (fromHash() !== cur) go(fromHash()); });
  go(fromHash());
})();
