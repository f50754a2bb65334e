// The explorer's script: page state in the URL fragment, recolouring of the drawings that
// tinyadder.analysis.pictures.figures wrote, the status line, hover read-outs. Vanilla JavaScript, no
// network. The data (id="data") was computed by tinyadder.analysis.pictures.views from an exact trace.
(function () {
  "use strict";
  var errors = document.getElementById("errors");
  function report(text) {
    errors.textContent += text + "\n";
    errors.hidden = false;
  }
  window.addEventListener("error", function (e) { report("script error: " + e.message); });

  var D = JSON.parse(document.getElementById("data").textContent);
  var T = D.tokens.length;
  var STAGES = D.stages.map(function (s) { return s.short; });
  var HEADS = Object.keys(D.heads);
  var MODES = ["softmax1", "softmax"];
  var state = {pos: D.defaults.pos, stage: D.defaults.stage, head: D.defaults.head,
               mode: D.defaults.mode};
  var notes = [];  // what the fragment asked for that could not be shown

  function decision(pos) {
    for (var i = 0; i < D.decisions.length; i++) {
      if (D.decisions[i].pos === pos) { return D.decisions[i]; }
    }
    return null;
  }

  // ------------------------------------------------------------------ fragment
  function readHash() {
    notes = [];
    var text = window.location.hash.replace(/^#/, "");
    if (!text) { return; }
    text.split("&").forEach(function (part) {
      var kv = part.split("="), key = decodeURIComponent(kv[0]),
          value = decodeURIComponent(kv.slice(1).join("="));
      if (key === "pos") {
        var p = parseInt(value, 10);
        if (/^[0-9]+$/.test(value) && p < T) { state.pos = p; }
        else { notes.push("no position " + value + " (0 to " + (T - 1) + ")"); }
      } else if (key === "stage") {
        if (STAGES.indexOf(value) >= 0) { state.stage = value; }
        else { notes.push("no stage " + value + " (" + STAGES.join(", ") + ")"); }
      } else if (key === "head") {
        if (HEADS.indexOf(value) >= 0) { state.head = value; }
        else { notes.push("head " + value + " not shown (" + HEADS.join(", ") + ")"); }
      } else if (key === "mode" || key === "softmax") {
        if (MODES.indexOf(value) >= 0) { state.mode = value; }
        else if (key === "softmax") { state.mode = value === "1" ? "softmax" : "softmax1"; }
        else { notes.push("no mode " + value + " (softmax1, softmax)"); }
      } else if (key) {
        notes.push("unknown setting " + key);
      }
    });
  }
  function writeHash() {
    var text = "#pos=" + state.pos + "&stage=" + state.stage + "&head=" + state.head +
               (state.mode === "softmax" ? "&mode=softmax" : "");
    if (window.location.hash === text) { return; }
    try { window.history.replaceState(null, "", text); }
    catch (e) { /* some file:// contexts refuse; the state still shows */ }
  }

  // ------------------------------------------------------------------ status
  function statusText() {
    var tok = D.tokens[state.pos];
    var parts = ["position " + state.pos, "after " + state.stage];
    var d = decision(state.pos);
    if (d) {
      var pred = "predicts " + d.winner;
      if (d.intended !== d.winner) { pred += ", intended " + d.intended; }
      parts.push(pred);
      parts.push("margin " + d.margin[2]);
      if (d.winner !== d.choice) {
        parts.push("tilt " + d.tilt_gap[2] + " beats err margin " + d.err_gap[2]);
      }
    } else {
      parts.push(tok.role === "sum" ? "the last digit: predicts nothing" :
                 "prompt '" + tok.text + "': predicts no digit of the sum");
    }
    parts.push("head " + state.head + " " + state.mode);
    var text = parts.join(" \u00b7 ");
    if (notes.length) { text += " \u00b7 ignored: " + notes.join("; "); }
    return text;
  }

  // ------------------------------------------------------------------ drawing
  function letterClass(prefix, letter) {
    return prefix + (letter === "z" ? "z" : String(letter.charCodeAt(0) - 97));
  }
  function setText(id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  }

  function drawAttention() {
    var head = D.heads[state.head], rows = head.classes[state.mode];
    var rects = document.getElementById("attn-cells").children, n = 0;
    for (var q = 0; q < T; q++) {
      for (var k = 0; k <= q + 1; k++, n++) {
        var letter = rows[q].charAt(k);
        rects[n].setAttribute("class", letter ? letterClass("s", letter) : "blank");
      }
    }
    var svg = document.getElementById("attn-svg");
    var c = parseFloat(svg.dataset.c), y0 = parseFloat(svg.dataset.y0);
    var sel = document.getElementById("attn-sel");
    sel.setAttribute("y", (y0 + state.pos * c - 1).toFixed(1));
    sel.setAttribute("visibility", "visible");
    setText("attn-title", state.head + ": log10 of each attention weight, " + state.mode +
            (state.mode === "softmax1" ? " (the sink column is the weight given to nothing)"
                                       : " (no sink: each row sums to 1)"));
    setText("attn-lo", head.range[state.mode][0].toFixed(0));
    setText("attn-hi", head.range[state.mode][1].toFixed(0));
    setText("attn-sinklabel", state.mode === "softmax1" ? "sink" : "");
    document.querySelectorAll("[data-head]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.head === state.head));
    });
    document.getElementById("mode").checked = state.mode === "softmax";
  }

  function drawResidual() {
    var R = D.residual[state.stage];
    var svg = document.getElementById("resid-svg");
    var rects = document.getElementById("resid-cells").children;
    var c = parseFloat(svg.dataset.c), h = parseFloat(svg.dataset.h);
    var x0 = parseFloat(svg.dataset.x0), ys = svg.dataset.ys.split(",").map(parseFloat);
    var marks = document.getElementById("resid-marks");
    while (marks.firstChild) { marks.removeChild(marks.firstChild); }
    var ranges = document.getElementById("resid-ranges").children;
    var NS = "http://www.w3.org/2000/svg";
    D.resid_rows.forEach(function (name, r) {
      var row = R.rows[name];
      ranges[r].textContent = row ? row.range : "";
      for (var p = 0; p < T; p++) {
        var cls = row ? letterClass("d", row.cls.charAt(p)) : "na";
        rects[r * T + p].setAttribute("class", cls);
        if (!row) { continue; }
        var x = x0 + p * c, y = ys[r];
        if (row.changed.charAt(p) === "1") {
          [[1, "chg"], [2.5, "chg2"]].forEach(function (m) {
            var e = document.createElementNS(NS, "rect");
            e.setAttribute("x", x + m[0]); e.setAttribute("y", y + m[0]);
            e.setAttribute("width", c - 2 * m[0]); e.setAttribute("height", h - 2 * m[0]);
            e.setAttribute("class", m[1]);
            marks.appendChild(e);
          });
        }
        if (row.departs.charAt(p) === "1") {
          var e = document.createElementNS(NS, "path");
          e.setAttribute("d", "M" + (x + 2) + " " + (y + 2) + "L" + (x + c - 2) + " " +
                         (y + h - 2) + "M" + (x + c - 2) + " " + (y + 2) + "L" + (x + 2) +
                         " " + (y + h - 2));
          e.setAttribute("class", "dep");
          marks.appendChild(e);
        }
      }
    });
    document.getElementById("resid-sel").setAttribute("x", (x0 + state.pos * c).toFixed(1));
    var label = D.stages[STAGES.indexOf(state.stage)].label;
    setText("resid-title", "Residual stream after " + label + " (" + state.stage + ")");
    var slider = document.getElementById("stage");
    slider.value = String(STAGES.indexOf(state.stage));
    setText("stage-label", "after " + label);
  }

  function drawPositionParts() {
    document.querySelectorAll("[data-show-pos]").forEach(function (el) {
      el.setAttribute("display",
                      parseInt(el.dataset.showPos, 10) === state.pos ? "inline" : "none");
    });
    var thinking = decision(state.pos) !== null;
    document.querySelectorAll(".needs-decision").forEach(function (el) {
      el.hidden = thinking;
    });
    var sum = document.getElementById("sum-svg");
    var index = D.predicting.indexOf(state.pos);
    document.getElementById("sum-sel").setAttribute(
      "y", (parseFloat(sum.dataset.y0) + (index < 0 ? -10 : index) *
            parseFloat(sum.dataset.h)).toFixed(1));
    document.querySelectorAll("#tokens button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(parseInt(b.dataset.pos, 10) === state.pos));
    });
    var tok = D.tokens[state.pos];
    setText("token-info", tokenText(tok));
    setText("pos-label", "position " + state.pos);
  }

  function power(e) {
    var sup = {"-": "\u207b", "0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3",
               "4": "\u2074", "5": "\u2075", "6": "\u2076", "7": "\u2077", "8": "\u2078",
               "9": "\u2079"};
    return "10" + String(e).split("").map(function (ch) { return sup[ch]; }).join("");
  }
  function tokenText(tok) {
    var who = {a: "a digit of a", b: "a digit of b", sum: "a digit of the sum",
               special: "a special token"}[tok.role];
    var text = "position " + tok.pos + ": '" + tok.text + "', " + who;
    if (tok.place !== null) { text += ", of place " + power(tok.place); }
    if (tok.predicts !== null) {
      text += "; it predicts the digit of place " + power(tok.next_place) + ": '" +
              tok.predicts + "'";
    } else { text += "; its prediction is not used"; }
    return text;
  }

  function render() {
    drawAttention();
    drawResidual();
    drawPositionParts();
    document.getElementById("status").textContent = statusText();
    writeHash();
  }
  function set(change) {
    for (var key in change) { state[key] = change[key]; }
    state.pos = Math.max(0, Math.min(T - 1, state.pos));
    notes = [];
    render();
  }

  // ------------------------------------------------------------------ hover
  var tip = document.getElementById("tip");
  function showTip(ev, lines) {
    tip.textContent = lines.join("\n");
    tip.hidden = false;
    tip.style.left = (ev.pageX + 14) + "px";
    tip.style.top = (ev.pageY + 14) + "px";
  }
  function hideTip() { tip.hidden = true; }
  function svgPoint(svg, ev) {
    var pt = svg.createSVGPoint();
    pt.x = ev.clientX; pt.y = ev.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  }
  function cellText(cell) {
    return cell[2] + (cell[1] === null ? "" : "   (log10 |x| = " + cell[1].toFixed(4) + ")");
  }

  function attentionHover(ev) {
    var svg = ev.currentTarget, p = svgPoint(svg, ev);
    var c = parseFloat(svg.dataset.c), x0 = parseFloat(svg.dataset.x0),
        y0 = parseFloat(svg.dataset.y0), sink = parseFloat(svg.dataset.sink);
    var q = Math.floor((p.y - y0) / c), k = Math.floor((p.x - x0) / c);
    if (p.x >= sink && p.x < sink + c) { k = q + 1; }
    if (q < 0 || q >= T || k < 0 || k > q + 1) { hideTip(); return null; }
    var head = D.heads[state.head], row = head.cells[state.mode][q];
    if (k === q + 1) {
      if (state.mode !== "softmax1") { hideTip(); return null; }
      showTip(ev, [state.head + " query " + q + ": sink (weight to nothing)", cellText(row[k])]);
    } else {
      showTip(ev, [state.head + " query " + q + " ('" + D.tokens[q].text + "'), key " + k +
                   " ('" + D.tokens[k].text + "'), " + state.mode,
                   "weight " + cellText(row[k]), "score " + head.score[q][k]]);
    }
    return q;
  }

  function residualHover(ev) {
    var svg = ev.currentTarget, p = svgPoint(svg, ev);
    var c = parseFloat(svg.dataset.c), h = parseFloat(svg.dataset.h),
        x0 = parseFloat(svg.dataset.x0), ys = svg.dataset.ys.split(",").map(parseFloat);
    var pos = Math.floor((p.x - x0) / c), r = -1;
    for (var i = 0; i < ys.length; i++) { if (p.y >= ys[i] && p.y < ys[i] + h) { r = i; } }
    if (pos < 0 || pos >= T || r < 0) { hideTip(); return null; }
    var name = D.resid_rows[r], row = D.residual[state.stage].rows[name];
    if (!row) { showTip(ev, [name + ": not in the stream after " + state.stage]); return pos; }
    var lines = [name + " at position " + pos + " ('" + D.tokens[pos].text + "') after " +
                 state.stage, cellText(row.cells[pos])];
    if (row.intended[pos]) { lines.push("intended " + row.intended[pos]); }
    if (row.changed.charAt(pos) === "1") {
      lines.push(state.stage === "readout" ? "the winner" : "changed by this stage");
    }
    if (row.departs.charAt(pos) === "1") { lines.push("departs from its intended value"); }
    showTip(ev, lines);
    return pos;
  }

  function paramHover(ev) {
    var k = ev.target.dataset ? ev.target.dataset.param : undefined;
    document.querySelectorAll("#params-svg .lane").forEach(function (l) {
      l.classList.remove("on"); l.classList.remove("rd");
    });
    document.querySelectorAll("#params-svg .chip").forEach(function (ch) {
      ch.classList.remove("on");
    });
    if (k === undefined) { hideTip(); return; }
    var P = D.params[parseInt(k, 10)];
    ev.target.classList.add("on");
    document.querySelectorAll("#params-svg .lane").forEach(function (l) {
      if (P.writes.indexOf(l.dataset.slot) >= 0) { l.classList.add("on"); }
      else if (P.reads.indexOf(l.dataset.slot) >= 0) { l.classList.add("rd"); }
    });
    showTip(ev, [P.tensor + " = " + P.value + "   (" + P.part + ")",
                 "entries: " + P.entries.join(", "),
                 "reads: " + (P.reads.join(", ") || "no slot (a bias or a token row)"),
                 "writes: " + (P.writes.join(", ") || "-"),
                 "ledger: " + P.rule]);
  }

  // ------------------------------------------------------------------ wiring
  function init() {
    readHash();
    var attn = document.getElementById("attn-svg");
    attn.addEventListener("mousemove", attentionHover);
    attn.addEventListener("mouseleave", hideTip);
    attn.addEventListener("click", function (ev) {
      var q = attentionHover(ev);
      if (q !== null) { set({pos: q}); }
    });
    var resid = document.getElementById("resid-svg");
    resid.addEventListener("mousemove", residualHover);
    resid.addEventListener("mouseleave", hideTip);
    resid.addEventListener("click", function (ev) {
      var p = residualHover(ev);
      if (p !== null) { set({pos: p}); }
    });
    var params = document.getElementById("params-svg");
    params.addEventListener("mouseover", paramHover);
    params.addEventListener("mouseleave", function (ev) { paramHover({target: {}}); });
    document.querySelectorAll("#tokens button").forEach(function (b) {
      b.addEventListener("click", function () { set({pos: parseInt(b.dataset.pos, 10)}); });
    });
    document.querySelectorAll("[data-head]").forEach(function (b) {
      b.addEventListener("click", function () { set({head: b.dataset.head}); });
    });
    document.getElementById("mode").addEventListener("change", function (ev) {
      set({mode: ev.target.checked ? "softmax" : "softmax1"});
    });
    document.getElementById("stage").addEventListener("input", function (ev) {
      set({stage: STAGES[parseInt(ev.target.value, 10)]});
    });
    document.getElementById("prev").addEventListener("click", function () {
      set({pos: state.pos - 1});
    });
    document.getElementById("next").addEventListener("click", function () {
      set({pos: state.pos + 1});
    });
    document.addEventListener("keydown", function (ev) {
      var tag = ev.target && ev.target.tagName;
      if (tag === "INPUT" && ev.target.type === "range") { return; }
      if (ev.key === "ArrowLeft") { set({pos: state.pos - 1}); ev.preventDefault(); }
      if (ev.key === "ArrowRight") { set({pos: state.pos + 1}); ev.preventDefault(); }
    });
    window.addEventListener("hashchange", function () { readHash(); render(); });
    render();  // notes from readHash() stay in the status line until the next change
    document.body.dataset.ready = "yes";
  }
  try { init(); }
  catch (e) { report("script error: " + (e && e.stack ? e.stack : e)); }
}());
