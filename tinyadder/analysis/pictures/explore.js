// The explorer's script: page state in the URL fragment, the guided tour, recolouring of the
// drawings that tinyadder.analysis.pictures.figures wrote, the status line, hover read-outs.
// Vanilla JavaScript, no network. The data (id="data") was computed by
// tinyadder.analysis.pictures.views from the run's trace.
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
  var TOUR = D.tour;
  var C = D.compare;  // a second model on the same sum (explore --compare A B), or null
  var state = {tour: 0, pos: D.defaults.pos, stage: D.defaults.stage, head: D.defaults.head,
               mode: D.defaults.mode, variant: D.defaults.variant, compare: C !== null};
  var notes = [];  // what the fragment asked for that could not be shown
  var shownStep = 0;  // the tour step the card last scrolled to

  function decision(pos) {
    for (var i = 0; i < D.decisions.length; i++) {
      if (D.decisions[i].pos === pos) { return D.decisions[i]; }
    }
    return null;
  }

  // ------------------------------------------------------------------ fragment
  function enterStep(k) {
    state.tour = k;
    if (k) {
      var s = TOUR[k - 1].state;
      for (var key in s) { state[key] = s[key]; }
    }
  }
  function readHash() {
    notes = [];
    var text = window.location.hash.replace(/^#/, "");
    if (!text || /^wt-/.test(text)) { return; }  // a link to a walkthrough section below
    var parts = text.split("&").map(function (part) {
      var kv = part.split("=");
      return [decodeURIComponent(kv[0]), decodeURIComponent(kv.slice(1).join("="))];
    });
    // a tour step sets the whole state first; the other settings then refine it
    parts.forEach(function (kv) {
      if (kv[0] !== "tour") { return; }
      var k = parseInt(kv[1], 10);
      if (/^[0-9]+$/.test(kv[1]) && k <= TOUR.length) { enterStep(k); }
      else { notes.push("no tour step " + kv[1] + " (1 to " + TOUR.length + ")"); }
    });
    parts.forEach(function (kv) {
      var key = kv[0], value = kv[1];
      if (key === "tour") { return; }
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
      } else if (key === "compare" && C) {
        if (value === "0" || value === "1") { state.compare = value === "1"; }
        else { notes.push("compare is 0 or 1"); }
      } else if (key === "variant") {
        if (D.variants.indexOf(value) >= 0) { state.variant = value; }
        else { notes.push("no variant " + value + " (" + D.variants.join(", ") + ")"); }
      } else if (key === "view") {  // scroll to this view once drawn (a link's target)
        if (document.getElementById("view-" + value)) { scrollView = value; }
        else { notes.push("no view " + value); }
      } else if (key) {
        notes.push("unknown setting " + key);
      }
    });
  }
  var scrollView = null;  // a view the fragment names (view=ruler): shown below the controls
  function scrollToView() {
    if (!scrollView) { return; }
    var view = document.getElementById("view-" + scrollView), bar =
        document.getElementById("controls").getBoundingClientRect().height;
    scrollView = null;
    window.scrollTo(0, view.getBoundingClientRect().top + window.scrollY - bar - 8);
  }
  function writeHash() {
    var text = "#" + (state.tour ? "tour=" + state.tour + "&" : "") + "pos=" + state.pos +
               "&stage=" + state.stage + "&head=" + state.head +
               (state.mode === "softmax" ? "&mode=softmax" : "") +
               (state.variant !== D.defaults.variant ? "&variant=" + state.variant : "") +
               (C && !state.compare ? "&compare=0" : "");
    if (window.location.hash === text) { return; }
    try { window.history.replaceState(null, "", text); }
    catch (e) { /* some file:// contexts refuse; the state still shows */ }
  }

  // ------------------------------------------------------------------ status
  function statusText() {
    var tok = D.tokens[state.pos];
    var parts = [];
    if (state.tour) { parts.push("tour " + TOUR[state.tour - 1].title); }
    parts.push("position " + state.pos, "after " + state.stage);
    var hidden = state.tour && document.getElementById("tour-answer").hidden &&
                 rightStep !== state.tour;
    // while a tour step's answer is hidden the line says the state only: what the position
    // predicts, x and the lead would answer the step's question above it; a right check
    // or the answer shown has answered it
    if (state.tour && !hidden) { parts.push("answered"); }
    var d = hidden ? null : decision(state.pos);
    var changed = state.variant !== D.defaults.variant;
    var built = changed ? "as built predicts " : "predicts ";
    // x, the tilt and the lead are the last FFN's and the readout's: they wait for those
    // stages, and in the tour for the step that defines them (the ruler)
    var ruler = TOUR.map(function (t) { return t.view; }).indexOf("ruler") + 1;
    var early = (state.tour && ruler && state.tour < ruler) ||
                STAGES.indexOf(state.stage) < STAGES.length - 2;
    if (hidden) {
      parts.push("answer hidden");
    } else if (d && early) {
      parts.push(built + d.written);
    } else if (d) {
      var pred = built + d.written;
      if (d.right !== d.written) { pred += ", right digit " + d.right; }
      parts.push(pred);
      // x = −6·10^-6 as the rest of the page writes a power (learner24 4)
      parts.push("x = " + shown(d.x_text).replace(/10\^(-?[0-9]+)/, function (_, e) {
        return power(parseInt(e, 10));
      }));
      if (d.flipped) {
        parts.push("tilt/margin = " + d.ratio_text + ": the tilt (" + shown(d.tilt) +
                   " units) beats the margin (" + shown(d.margin) + " units)");
      }
      parts.push("lead " + shown(d.lead) + " units (" + shown(d.lead_logits) + " in logits)");
    } else {
      var held = tok.role === "special" ? tok.label : tok.label + " '" + tok.text + "'";
      parts.push(tok.predicts !== null ? held + ": predicts '" +
                 tok.predicts + "'" : tok.role === "sum" ? "the last digit: predicts nothing" :
                 "prompt '" + tok.text + "': predicts no digit of the sum");
    }
    parts.push("head " + state.head + " " +
               (state.mode === "softmax1" ? D.heads[state.head].kind : "softmax"));
    if (changed) {  // change one thing: which run is drawn, and what it writes here
      var named = document.querySelector('button[data-variant="' + state.variant + '"]');
      var own = (D.variant_writes[state.variant] || {})[state.pos];
      parts.push("variant " + (named ? named.textContent : state.variant) +
                 (own !== undefined && !hidden ? " predicts " + own : ""));
    }
    if (C && state.compare) {
      var m = matched(state.pos);
      var role = roleName(m.label, state.pos);  // "separator '0'", not its key "'0' #3"
      parts.push("compare " + C.model + ": " + (m.pos === null
        ? "no position " + (m.label.indexOf("predicts ") === 0 ? m.label : "holds " + role)
        : C.tokens[m.pos].role === "special" && m.label.indexOf("predicts ") !== 0
        ? C.names[m.pos] : "position " + m.pos + " (" + role + ")"));
    }
    var text = parts.join(" \u00b7 ");
    if (notes.length) { text += " \u00b7 ignored: " + notes.join("; "); }
    return text;
  }

  // ------------------------------------------------------------------ drawing
  function weightClass(letter) {
    return letter === "." ? "sz" : "s" + D.levels.indexOf(letter);
  }
  function dark(letter) {  // svg.dark: white text on PuOr 0..2 and 9..10
    return letter !== "-" && letter !== "z" && Math.abs(letter.charCodeAt(0) - 102) >= 3;
  }
  function signedClass(letter) {  // svg.signed_class: '-' is an unused logit, grey
    if (letter === "-") { return "na"; }
    return "d" + (letter === "z" ? "z" : String(letter.charCodeAt(0) - 97));
  }
  function setText(id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  }
  function each(selector, fn) {
    document.querySelectorAll(selector).forEach(fn);
  }
  function show(el, visible) { el.setAttribute("display", visible ? "inline" : "none"); }

  function drawAttention() {
    var head = D.heads[state.head], rows = head.classes[state.mode];
    var rects = document.getElementById("attn-cells").children, n = 0;
    for (var q = 0; q < T; q++) {
      for (var k = 0; k <= q + 1; k++, n++) {
        var letter = rows[q].charAt(k);
        rects[n].setAttribute("class", letter ? weightClass(letter) : "blank");
      }
    }
    var svg = document.getElementById("attn-svg");
    var c = parseFloat(svg.dataset.c), y0 = parseFloat(svg.dataset.y0);
    var sel = document.getElementById("attn-sel");
    sel.setAttribute("y", (y0 + state.pos * c - 1).toFixed(1));
    sel.setAttribute("visibility", "visible");
    var sunk = state.mode === "softmax1" && head.kind === "softmax1";
    // the outline ends at the sink column, or at the last key where there is none
    sel.setAttribute("width", (((sunk ? 1.6 : 0) + D.tokens.length) * c + 2).toFixed(1));
    setText("attn-title", state.head + ": attention weight of each key (column) for each " +
            "query (row), " + (state.mode === "softmax1" ? head.kind : "softmax") +
            (head.kind === "softmax" && state.mode === "softmax1" ? " (the model's own)" : "") +
            (sunk ? " (sink: the weight given to nothing)" : " (no sink: each row sums to 1)"));
    setText("attn-sinklabel", sunk ? "sink" : "");
    each("[data-legend]", function (g) { show(g, g.dataset.legend === state.head); });
    var top = [], cells = head.cells[state.mode][state.pos];
    var drawn = head.classes[state.mode][state.pos];
    // a weight of 0, or one below the colour scale's floor ('.', drawn as ~0), is none of
    // the largest
    for (var k = 0; k <= state.pos; k++) {
      if (cells[k][2] !== "masked" && cells[k][1] !== null && drawn.charAt(k) !== ".") {
        top.push([cells[k][1], k, cells[k][2]]);
      }
    }
    var log = function (t) { return t[0] === null ? -1e9 : t[0]; };  // a zero weight: last
    top.sort(function (x, y) { return log(y) - log(x); });
    setText("attn-top", "Query " + state.pos + " (" + D.tokens[state.pos].label + "), largest " +
            "weights: " + top.slice(0, 4).map(function (t) {
              return D.tokens[t[1]].label + " (" + t[1] + ") " + shown(t[2]);
            }).join(", ") + (sunk ? "; sink " + shown(cells[state.pos + 1][2]) : "") + ".");
    drawHeadStrips();
    each("[data-head]", function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.head === state.head));
    });
    document.getElementById("mode").checked = state.mode === "softmax";
  }

  // a model with more than one head: every head's row from the selected query at once,
  // under the line of the largest weights (the compare page's strips, ``strip``)
  function drawHeadStrips() {
    if (HEADS.length < 2) { return; }
    var box = document.getElementById("attn-strips");
    if (!box) {
      box = el("div", "head-strips");
      box.id = "attn-strips";
      var line = document.getElementById("attn-top");
      line.parentNode.insertBefore(box, line.nextSibling);
    }
    var labels = D.tokens.map(function (t) { return t.label; });
    fill("attn-strips", [el("p", "note", "Every head from query " + state.pos + " at once, " +
      "each on its own colour scale (the map below draws " + state.head + "):")]
      .concat(HEADS.map(function (key) {
        var h = D.heads[key], kind = state.mode === "softmax1" ? h.kind : "softmax";
        return strip(key, kind, h.classes[state.mode][state.pos],
                     h.cells[state.mode][state.pos].map(function (c) { return c[2]; }),
                     labels, state.pos, h.range);
      })));
  }

  function drawResidual() {
    var R = D.residual[state.stage];
    var svg = document.getElementById("resid-svg");
    var rects = document.getElementById("resid-cells").children;
    var c = parseFloat(svg.dataset.c), hs = svg.dataset.hs.split(",").map(parseFloat);
    var x0 = parseFloat(svg.dataset.x0), ys = svg.dataset.ys.split(",").map(parseFloat);
    var values = document.getElementById("resid-values");
    var marks = document.getElementById("resid-marks");
    while (marks.firstChild) { marks.removeChild(marks.firstChild); }
    var ranges = document.getElementById("resid-ranges").children;
    var NS = "http://www.w3.org/2000/svg";
    D.resid_rows.forEach(function (name, r) {
      var row = R.rows[name];
      ranges[r].textContent = row ? row.range : "";
      for (var p = 0; p < T; p++) {
        var cls = row ? signedClass(row.cls.charAt(p)) : "na";
        rects[r * T + p].setAttribute("class", cls);
        if (values && r * T + p < values.children.length) {
          values.children[r * T + p].textContent = row ? cellValue(row, p) : "";
          values.children[r * T + p].setAttribute(
            "class", row && dark(row.cls.charAt(p)) ? "small val dk" : "small val");
        }
        if (!row) { continue; }
        var x = x0 + p * c, y = ys[r], h = hs[r];
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
    var label = D.stages[STAGES.indexOf(state.stage)].label;
    drawColumn(R, label);
    document.getElementById("resid-sel").setAttribute("x", (x0 + state.pos * c).toFixed(1));
    foldLogits(svg, ys, hs, state.stage === "readout");
    setText("resid-title", "Residual stream after " + label + " (" + state.stage + ")");
    document.getElementById("stage").value = String(STAGES.indexOf(state.stage));
    setText("stage-label", "after " + label);
  }

  // the selected position's column as a list, slot by slot, beside the grid: where one
  // slot's colour is the same across a row (layer 1's average, shared by every position)
  // the numbers still differ
  function drawColumn(R, label) {
    var box = document.getElementById("resid-column");
    if (!box) { return; }
    var tok = D.tokens[state.pos], list = el("ul", "column-list");
    // the slots a tour step asks for wait for its check or its answer
    var asked = concealed() ? TOUR[state.tour - 1].hides || [] : [];
    D.resid_rows.forEach(function (name) {
      var row = R.rows[name];
      if (!row) { return; }
      var item = el("li", "");
      item.appendChild(el("span", "slot", name));
      item.appendChild(el("span", "num", asked.indexOf(name) < 0 ? decimal(row, state.pos) :
                          "? (the step asks it)"));
      list.appendChild(item);
    });
    fill("resid-column", [el("p", "note", "Position " + state.pos + " (" + tok.label +
      ") after " + label + ", slot by slot:"), list]);
  }

  // the logit rows hold something at the readout alone: before it they are left out, and
  // what is drawn below them (the colour key) moves up into their place
  var LOGITS = D.resid_rows.filter(function (n) { return /^logit /.test(n); }).length;
  function logitBand(ys, hs) {  // [the slot rows' bottom, the logit rows' bottom]
    var n = ys.length - LOGITS, last = ys.length - 1;
    return [ys[n - 1] + hs[n - 1], ys[last] + hs[last]];
  }
  function foldLogits(svg, ys, hs, shown) {
    if (!LOGITS || LOGITS === ys.length) { return; }
    var band = logitBand(ys, hs), shift = shown ? 0 : band[1] - band[0];
    if (!svg.dataset.height) { svg.dataset.height = svg.getAttribute("height"); }
    var height = parseFloat(svg.dataset.height) - shift, width = svg.getAttribute("width");
    svg.setAttribute("height", String(height));
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.querySelectorAll("text, rect").forEach(function (e) {
      if (e.id === "resid-sel") {
        if (!e.dataset.height) { e.dataset.height = e.getAttribute("height"); }
        e.setAttribute("height", String(parseFloat(e.dataset.height) - shift));
        return;
      }
      var y = parseFloat(e.getAttribute("y"));
      if (y > band[0] && y <= band[1]) {
        e.setAttribute("display", shown ? "inline" : "none");
      } else if (y > band[1]) {
        e.setAttribute("transform", "translate(0 " + (-shift) + ")");
      }
    });
  }

  function drawPositionParts() {
    // a part drawn for one position (and, in place values and count, for one mode)
    each("[data-show-pos]", function (el) {
      var mode = el.dataset.mode || el.parentNode.dataset.mode;
      show(el, parseInt(el.dataset.showPos, 10) === state.pos &&
               (mode === undefined || mode === state.mode));
    });
    each("#count-svg > [data-mode]", function (g) { show(g, g.dataset.mode === state.mode); });
    var thinking = decision(state.pos) !== null;
    each(".needs-decision", function (el) { el.hidden = thinking; });
    ["ruler-svg", "flaw-svg"].forEach(function (id) {
      var svg = document.getElementById(id);
      if (svg && svg.querySelector("[data-show-pos]")) { svg.style.display = thinking ? "" : "none"; }
    });
    // the ruler as tall as its position needs: no empty box where the magnifier is skipped
    var ruler = document.getElementById("ruler-svg"),
        drawn = ruler && ruler.querySelector('[data-height][data-show-pos="' + state.pos + '"]');
    if (drawn) {
      var box = ruler.getAttribute("viewBox").split(" ");
      box[3] = drawn.dataset.height;
      ruler.setAttribute("viewBox", box.join(" "));
      ruler.setAttribute("height", drawn.dataset.height);
    }
    var sum = document.getElementById("sum-svg");
    if (sum) {
      var index = D.predicting.indexOf(state.pos);
      document.getElementById("sum-sel").setAttribute(
        "y", (parseFloat(sum.dataset.y0) + (index < 0 ? -10 : index) *
              parseFloat(sum.dataset.h)).toFixed(1));
    }
    each("#tokens button", function (b) {
      b.setAttribute("aria-pressed", String(parseInt(b.dataset.pos, 10) === state.pos));
    });
    setText("token-info", tokenText(D.tokens[state.pos]));
    setText("pos-label", "position " + state.pos);
  }

  function drawVariant() {
    each("#change-svg [data-variant]", function (g) {
      show(g, g.dataset.variant === state.variant);
    });
    each("button[data-variant]", function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.variant === state.variant));
    });
  }

  function power(e) {
    var sup = {"-": "\u207b", "0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3",
               "4": "\u2074", "5": "\u2075", "6": "\u2076", "7": "\u2077", "8": "\u2078",
               "9": "\u2079"};
    return "10" + String(e).split("").map(function (ch) { return sup[ch]; }).join("");
  }
  function tokenText(tok) {
    var who = {a: "a digit of a", b: "a digit of b", sum: "a digit of the sum",
               special: "a special token", input: "the task's input"}[tok.role];
    if (tok.role === "sum" && /^out/.test(tok.label)) { who = "a token of the answer"; }
    var text = "position " + tok.pos + ": '" + tok.text + "', " + who;
    if (tok.place !== null) { text += ", of place " + power(tok.place); }
    if (tok.predicts !== null) {
      text += "; it predicts the next token: '" + tok.predicts + "'" +
              (tok.next_place !== null ? ", of place " + power(tok.next_place) : "");
    } else { text += "; its prediction is not used"; }
    return text;
  }

  // ------------------------------------------------------------------ compare
  // the second model's position that predicts the digit of the sum position pos predicts
  // here, or else that holds what pos holds (by role label)
  var ownLabel = {}, ownDecides = {};
  if (C) {
    for (var l in C.own_labels) { ownLabel[C.own_labels[l]] = l; }
    for (var s in C.own_decides) { ownDecides[C.own_decides[s]] = s; }
  }
  function matched(pos) {
    var digit = ownDecides[pos];
    if (digit !== undefined) {
      return {label: "predicts " + digit,
              pos: C.decides.hasOwnProperty(digit) ? C.decides[digit] : null};
    }
    var label = ownLabel[pos];
    return {label: label, pos: C.labels.hasOwnProperty(label) ? C.labels[label] : null};
  }
  // a role label as a reader reads it: a separator (several positions may share its text,
  // compare.by_label numbers them "'0' #2") named by its position, "separator '0' at
  // position 15"
  function named(label, pos) {
    var m = /^('.*?')( #[0-9]+)?$/.exec(label);
    return m ? "separator " + m[1] + " at position " + pos : label;
  }
  function roleName(label, pos) { return named(label, pos).replace(/ at position [0-9]+$/, ""); }
  function valueOf(text) {  // the tracer's text as a number, for ranking weights only
    var t = text.replace(/^~/, ""), parts = t.split("/");
    return parts.length === 2 ? parseFloat(parts[0]) / parseFloat(parts[1]) : parseFloat(t);
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  // one head's weights from query q: a strip of cells on the head's own log scale, and its
  // three largest weights in numbers
  // a key's name under a strip: its label as the token strip and the strip's own largest
  // weights name it (a0, s10, '0' for a separator digit, '='), 'bos' for <bos>
  function keyName(label) {
    return /^<.*>$/.test(label) ? label.slice(1, -1) : label;
  }
  function strip(key, kind, letters, texts, labels, q, range) {
    var box = el("div", "strip"), cells = el("div", "cells"), ranked = [];
    var names = el("div", "keys");
    var keys = kind === "softmax1" ? texts.length : q + 1;  // an ordinary softmax: no sink
    for (var k = 0; k < keys; k++) {
      var sink = k === q + 1, letter = letters.charAt(k);
      var c = el("span", (letter ? weightClass(letter) : "blank") + (k === q ? " q" : "") +
                 (sink ? " sink" : ""));
      var name = sink ? "sink (weight to nothing)" : "key " + k + " " + labels[k];
      c.title = name + ": " + shown(texts[k]);
      cells.appendChild(c);
      names.appendChild(el("span", sink ? "sink" : "", sink ? "sink" : keyName(labels[k])));
      if (texts[k] !== "masked" && !sink && letter !== ".") {  // '.': below the scale's floor
        ranked.push([valueOf(texts[k]), labels[k] + " (" + k + ")", texts[k]]);
      }
    }
    ranked = ranked.filter(function (r) { return r[0] > 0; });  // a 0 is none of the largest
    ranked.sort(function (x, y) { return y[0] - x[0]; });
    // the three largest, and each next within a factor of 2 of the last listed (rope-19's
    // b_(k-1) beside a_(k-1)), at most six: a near tie is never cut off
    var shownTop = Math.min(3, ranked.length);
    while (shownTop < Math.min(6, ranked.length) &&
           ranked[shownTop][0] >= 0.5 * ranked[shownTop - 1][0]) { shownTop++; }
    // every key alike (head 4, layer 1's average): one weight, said once
    var uniform = ranked.length > 3 && ranked.length === q + 1 && ranked.every(function (r) {
      return r[2] === ranked[0][2];
    });
    var sinkSame = kind === "softmax1" && texts[q + 1] === ranked[0][2];
    box.appendChild(el("div", "top", key + " (" + kind + ") from query " + q + ": " + (uniform
      ? "uniform: " + shown(ranked[0][2]) + " on each of the " + ranked.length + " keys" +
        (sinkSame ? " and the sink" : kind === "softmax1" ? "; sink " + shown(texts[q + 1]) : "")
      : "largest " + ranked.slice(0, shownTop).map(function (r) {
        return r[1] + " " + shown(r[2]);
      }).join(", ") + (kind === "softmax1" ? "; sink " + shown(texts[q + 1]) : ""))));
    box.appendChild(cells);
    box.appendChild(names);
    if (range) { box.appendChild(el("div", "range", range)); }
    return box;
  }
  function fill(id, nodes) {
    var box = document.getElementById(id);
    while (box.firstChild) { box.removeChild(box.firstChild); }
    nodes.forEach(function (n) { box.appendChild(n); });
  }
  function drawCompare() {
    var view = document.getElementById("view-compare");
    if (!view) { return; }
    view.hidden = !state.compare;
    document.getElementById("compare").checked = state.compare;
    if (!state.compare) { return; }
    var m = matched(state.pos), tok = D.tokens[state.pos];
    var other = m.pos === null ? null : C.tokens[m.pos];
    var said = function (t) { return t.predicts === null ? "its prediction is not a digit " +
                                                           "of the sum"
                                                         : "it predicts '" + t.predicts + "'"; };
    var what = function (t) {  // a digit's label and text, a separator's text once
      return (t.role === "special" ? "" : " '" + t.text + "'") + "; " + said(t);
    };
    var decides = m.label.indexOf("predicts ") === 0, held = ownLabel[state.pos];
    var heldSaid = C.own_names[state.pos];  // compare.called: "'=' (8, the separator ...)"
    setText("cmp-where", "Position " + state.pos + " here holds " + heldSaid + what(tok) +
            ". " + (other === null && !decides && /^'.*?'( #[0-9]+)?$/.test(held) ?
             C.model + " has no position matched with it: a separator with no job (before " +
             "a, before b, before the answer) is matched only in the same prompt layout." :
             other === null ? C.model + " has no position that " +
             (decides ? m.label : "holds " + roleName(held, state.pos)) + "." :
             "In " + C.model + " the position that " + (decides ? m.label : "holds " +
             roleName(held, state.pos)) + " is " + m.pos + ": it holds " +
             C.names[m.pos] +
             what(other) + "."));
    // the key-quantity table's row of the selected position
    document.querySelectorAll("#key-quantities tr[data-pos]").forEach(function (tr) {
      tr.classList.toggle("sel", tr.getAttribute("data-pos") === String(state.pos));
    });
    var labels = D.tokens.map(function (t) { return t.label; });
    // each column headed by its model and query (A: this page's model, B: the other)
    var who = function (side, model, pos, t, name) {
      return el("div", "cmp-who", side + ": " + model + ", query " + (t.role === "special"
                ? name : "position " + pos + " (" + name + ")") +
                (t.predicts === null ? "" : ", predicts '" + t.predicts + "'"));
    };
    fill("cmp-attn-a", [who("A", C.own_model, state.pos, tok, C.own_names[state.pos])].concat(HEADS.map(function (key) {
      var h = D.heads[key];
      return strip(key, h.kind, h.classes.softmax1[state.pos],
                   h.cells.softmax1[state.pos].map(function (c) { return c[2]; }), labels,
                   state.pos, h.range);
    })));
    var theirs = C.tokens.map(function (t) { return t.label; });
    fill("cmp-attn-b", m.pos === null ?
      [el("div", "cmp-who", "B: " + C.model), el("p", "", "no matching query")] :
      [who("B", C.model, m.pos, other, C.names[m.pos])].concat(Object.keys(C.heads).map(function (key) {
        var h = C.heads[key];
        return strip(key, h.kind, h.classes[m.pos], h.cells[m.pos], theirs, m.pos, h.range);
      })));
    // a stage the other model lacks is matched by role: its last stage of the same kind
    // (TinyAdder-36's L1.attn, the running total, against a one-layer model's L0.attn)
    var other = state.stage, kind = state.stage.split(".")[1];
    if (!C.residual[other] && kind) {
      Object.keys(C.residual).forEach(function (s) {
        if (s.split(".")[1] === kind) { other = s; }
      });
    }
    var mine = D.residual[state.stage].rows, rows = C.residual[other];
    var common = rows ? Object.keys(mine).filter(function (n) {
      return rows[n] && !/^logit /.test(n);
    }).length : 0;
    setText("cmp-lanes-title", "Residual lanes by slot name after " + state.stage +
            (state.stage === "readout" ? " (and the logits)" : "") +
            (!rows ? ": " + C.model + " has no stage " + state.stage :
             other !== state.stage ? " (" + C.model + ": after its last " +
             (kind === "attn" ? "attention" : "FFN") + ", " + other + ")" : ""));
    // the slots both name first (the logits at the readout), then each model's own; at a
    // position B lacks, A's slots, B's column a dash
    var theirNames = rows && m.pos !== null ? Object.keys(rows) : [];
    var names = Object.keys(mine).filter(function (n) { return theirNames.indexOf(n) >= 0; })
      .concat(Object.keys(mine).filter(function (n) { return theirNames.indexOf(n) < 0; }),
              theirNames.filter(function (n) { return !mine[n]; }));
    if (m.pos === null) {
      document.getElementById("cmp-lanes-title").textContent += "; no position of " +
        C.model + " is matched with " + state.pos + ", so its column shows \u2014";
    }
    var values = C.values[other] || {};
    var largest = function (list) {
      return list.reduce(function (m, v) { return v === null ? m : Math.max(m, Math.abs(v)); },
                         0);
    };
    // compare.alike: the same text, or both dust, each 10^-12 of its own run's largest value
    // of the slot or less (exact 10^-7386 beside a float's 0)
    var alike = function (n, a, b) {
      var fa = mine[n].cells[state.pos][0], fb = values[n] ? values[n][m.pos] : null;
      if (a === b) { return true; }
      if (fa === null || fb === null) { return false; }
      return Math.abs(fa) <= 1e-12 * largest(mine[n].cells.map(function (c) { return c[0]; }))
        && Math.abs(fb) <= 1e-12 * largest(values[n]);
    };
    // what a lane holds by each design (compare.meaning), for the cells' hovers: its
    // meaning after this stage, or after the last stage before it that gives one (x0 after
    // the readout holds what the FFN left)
    var formOf = function (M, stages, stage, n) {
      for (var i = stages.indexOf(stage); i >= 0; i--) {
        if (M[stages[i]] && M[stages[i]][n]) { return [M[stages[i]][n], stages[i]]; }
      }
      return null;
    };
    var said = function (model, n, form, stage, pos, deciding, f) {
      if (!form) { return model + "'s " + n + ": no designed meaning this page knows"; }
      return model + "'s " + n + (form[1] === stage ? "" : " (as after " + form[1] + ")") +
        ": " + whole(form[0][deciding ? 1 : 0]).replace(/\{i2\}/g, String(pos + 2))
          .replace(/\{P\}/g, f ? f[0] : "").replace(/\{x\}/g, f ? f[1] : "");
    };
    // a formula in s_k, a_k ... with this position's digits put in, as the page's own hover
    var withCase = function (text, cases, pos) {
      return text.indexOf("_k") >= 0 && cases && cases[pos] ?
        text + "\n" + caseLine(text, cases[pos]) : text;
    };
    var theirMeaning = function (n) {
      var f = C.fills[m.pos];
      return withCase(said(C.model, n, formOf(C.meanings, C.stages, other, n), other, m.pos,
                           f || C.next_place[m.pos] !== null, f), C.cases, m.pos);
    };
    var myMeaning = function (n) {
      var d = decision(state.pos), f = d ? [power(d.power), shown(d.x_text)] : null;
      return withCase(said(C.own_model, n, formOf(D.meanings, STAGES, state.stage, n),
                           state.stage, state.pos,
                           d || D.tokens[state.pos].next_place !== null, f),
                      D.cases, state.pos);
    };
    var apart = (C.homonyms[state.stage] || []).filter(function (n) { return rows && rows[n]; });
    var readout = state.stage === "readout";
    var logit = function (n) { return /^logit /.test(n); };
    var lines = C.writes[state.stage] ? [C.writes[state.stage]] : [];
    // how layer 1's lanes hold the key-quantity table's R + b + l (compare.average_line)
    if (state.stage === "L1.attn" && C.own_average[state.pos]) {
      lines.push(C.own_average[state.pos]);
    }
    if (other === "L1.attn" && m.pos !== null && C.average[m.pos]) {
      lines.push(C.average[m.pos]);
    }
    if (apart.length) {
      var listed = apart.length > 1 ? apart.slice(0, -1).join(", ") + " and " +
                                       apart[apart.length - 1] : apart[0];
      lines.push(listed + (apart.length > 1 ? " are" : " is") + " named alike " +
                 "but hold different quantities in the two designs after this stage (hover a " +
                 "value for each one's meaning): each is 'another quantity', never 'same', " +
                 "even where the numbers are equal.");
    }
    if (readout && C.scales_differ) {
      // the largest |logit| at the two positions drawn (the intro's is over all positions)
      var big = function (cellsAt) {
        return names.filter(logit).reduce(function (x, n) {
          var v = cellsAt(n); return v === null || v === undefined ? x : Math.max(x, Math.abs(v));
        }, 0).toExponential(1).replace(/e\+?(-?[0-9]+)$/, function (_, e) {
          return "\u00b7" + power(parseInt(e, 10)); });
      };
      lines.push("Here the largest |logit| is about " + big(function (n) {
        return mine[n] ? mine[n].cells[state.pos][0] : null; }) + " in " + C.own_model +
        (m.pos === null ? "" : " and " + big(function (n) {
          return values[n] ? values[n][m.pos] : null; }) + " in " + C.model) + ".");
      lines.push("The logits are on different scales: compare the winner and the lead " +
                 "(the winner's logit less the runner-up's, in each model's own units), not " +
                 "the logits.");
    }
    [[C.own_model, C.own_readout_slots, mine], [C.model, C.readout_slots, rows || {}]]
      .forEach(function (r) {
        var said = r[1].map(function (slot, u) { return slot ? u + " \u2212" + slot : null; })
          .filter(function (t) { return t; });
        // the slots no logit reads keep what the stage before left, unread
        var unread = Object.keys(r[2]).filter(function (n) {
          return !logit(n) && r[1].indexOf(n) < 0;
        });
        if (readout && said.length) {
          lines.push(r[0] + "'s slots here hold the ten errors whose negatives are the " +
                     "logits: logit u = \u2212(the slot it reads for u): " + said.join(", ") +
                     "." + (unread.length ? " Its other slots (" + unread.join(", ") + ") " +
                     "are read by no logit: they hold what an earlier stage left." : ""));
        }
      });
    // a prompt position's (or the last one's) prediction is never used: its logits may
    // differ, or tie, without the two designs disagreeing on the sum
    if (readout && D.tokens[state.pos].predicts === null) {
      lines.push("Position " + state.pos + " (" + D.tokens[state.pos].label + ") is " +
                 (D.tokens[state.pos].role === "sum" ? "the last position" : "a prompt " +
                  "position") + ": its prediction is not used, so its logits may differ or " +
                 "tie without the designs disagreeing.");
    }
    setText("cmp-note", lines.join(" "));
    // how far apart two numbers are, relative to the larger: 'by 0.086%'
    var by = function (fa, fb) {
      if (fa === null || fb === null || Math.max(Math.abs(fa), Math.abs(fb)) === 0) { return ""; }
      var r = 100 * Math.abs(fa - fb) / Math.max(Math.abs(fa), Math.abs(fb));
      return " by " + (r >= 10 ? Math.round(r) : Number(r.toPrecision(2))) + "%";
    };
    var size = function (n) {
      return by(mine[n].cells[state.pos][0], values[n] ? values[n][m.pos] : null);
    };
    // a tracer's text as a float, for a difference's size only: '~-0.0801490', '-5/2'
    var num = function (t) {
      var q = String(t).replace(/^~/, "").split("/");
      return q.length === 2 ? Number(q[0]) / Number(q[1]) : Number(q[0]);
    };
    // a logit on the other's scale compares by its gap to the winner, which decides the
    // digit: six digits of a logit near 10^5 cannot tell a gap of 0.080 from one of 0.091
    var gapsOf = function (n) {
      var g = mine[n] && mine[n].gap, h = readout && C.gaps[n];
      return g && h && m.pos !== null ? [g[state.pos], h[m.pos]] : null;
    };
    // what a difference comes to: the digit each model picks at these positions, or, at a
    // position that predicts none, the answer each writes (read from the two runs)
    var mw = C.own_winners[state.pos], tw = m.pos === null ? null : C.winners[m.pos];
    var outcome = mw && tw ? (mw[0] !== tw[0] ? " (the digits differ here: " + mw[0] +
                                                " against " + tw[0] + ")" :
                              readout ? " (the same digit wins: see the winner)" :
                              " (both still pick the same digit here, " + mw[0] + ")")
      : C.own_answer === C.answer ? " (both still write the same answer, " + C.answer + ")"
      : " (the answers differ: " + C.own_answer + " against " + C.answer + ")";
    // a slot named alike but meant apart is another quantity, equal numbers or not
    var verdict = function (n, a, b) {
      if (m.pos === null) { return ["alone", ""]; }
      if (a === null || b === null) { return ["alone", "in one only"]; }
      if (apart.indexOf(n) >= 0) {
        return ["differs", "another quantity" + (alike(n, a, b) ? " (equal numbers)" : "")];
      }
      if (logit(n) && C.scales_differ) { return ["alone", "another scale"]; }
      var g = logit(n) && gapsOf(n);
      if (g) {
        return g[0] === g[1] || num(g[0]) === num(g[1]) ? ["same", "same gap to the winner"] :
          ["differs", "its gap to the winner differs" + by(num(g[0]), num(g[1]))];
      }
      if (alike(n, a, b)) { return ["same", "same"]; }
      return ["differs", "differs" + size(n) + outcome];
    };
    // exact dust (compare.key_quantities): a value not 0 but too small for a float (an
    // exact run's far keys' weights, 10^-227150166) reads as 0, its value in the hover
    var DUST_TEXT = "\u2248 0 (exact dust)";
    var zero = function (g) { return /^-?0(\.0)?$/.test(g); };
    // a tie at the top is said as one: "tied for the winner" on each of its logits
    var tops = function (gapAt) {
      return names.filter(function (n) { var g = gapAt(n); return g && zero(g); }).length;
    };
    var myTop = tops(function (n) { return mine[n] && mine[n].gap && mine[n].gap[state.pos]; });
    var theirTop = tops(function (n) { return readout && m.pos !== null && C.gaps[n] &&
                                              C.gaps[n][m.pos]; });
    var gapText = function (g, top) {
      return zero(g) ? (top > 1 ? "tied for the winner" : "the winner") :
        shown(g) + " to the winner";
    };
    // one number format in the table: a rounded value (~, ≈) to six significant digits, as
    // the tracer writes most ('~2.05·10⁷' as '~2.05000·10⁷'); an exact one as it is
    var six = function (text) {
      var t = /^(~|\u2248 \u2212)([0-9]+)(?:\.([0-9]*))?(\u00b710[\u207b\u2070-\u2079\u00b9\u00b2\u00b3]+)?$/
        .exec(text);
      if (!t) { return thin(text); }
      var frac = t[3] || "", sig = (t[2] + frac).replace(/^0+/, "").length;
      return thin(sig >= 6 || !/[1-9]/.test(t[2] + frac) ? text :
        t[1] + t[2] + "." + frac + new Array(6 - sig + 1).join("0") + (t[4] || ""));
    };
    // compare.thin: '~' kept apart from the digits by a thin space, as '\u2248 ' is
    var thin = function (text) { return text.replace(/^~/, "~\u2009"); };
    var dust = function (v, text) { return v === 0 && !/^-?0(\.0)?$/.test(text); };
    var dustTip = function (text) {
      return shown(text) + " (exact dust: too small for a float)\n";
    };
    var body = names.map(function (n) {
      var a = mine[n] ? mine[n].cells[state.pos][2] : null;
      var b = rows && rows[n] && m.pos !== null ? rows[n][m.pos] : null;
      var v = verdict(n, a, b), tr = el("tr", v[0]);
      var bd = (C.dec[other] || {})[n] || {};
      var myDust = a !== null && dust(mine[n].cells[state.pos][0], a);
      var theirDust = b !== null && dust(values[n][m.pos], b);
      var name = el("td", "", n), mineTd = el("td", "num", a === null ? "\u2014" :
                                                   myDust ? DUST_TEXT :
                                                   six(decimal(mine[n], state.pos)));
      var theirsTd = el("td", "num", b === null ? "\u2014" : theirDust ? DUST_TEXT :
                                     six(bd[m.pos] !== undefined ? bd[m.pos] : shown(b)));
      // a logit: its gap to the winner beside it (six digits may not tell two logits apart)
      var myGap = a !== null && mine[n].gap, theirGap = b !== null && readout && C.gaps[n];
      if (myGap) { mineTd.textContent += " (" + gapText(myGap[state.pos], myTop) + ")"; }
      if (theirGap) { theirsTd.textContent += " (" + gapText(theirGap[m.pos], theirTop) + ")"; }
      if (a !== null) { mineTd.title = (myDust ? dustTip(a) : "") + myMeaning(n); }
      if (b !== null) { theirsTd.title = (theirDust ? dustTip(b) : "") + theirMeaning(n); }
      name.title = [a !== null ? myMeaning(n) : null, b !== null ? theirMeaning(n) : null]
        .filter(function (t) { return t; }).join("\n");
      [name, mineTd, theirsTd, el("td", "", v[1])].forEach(function (td) {
        tr.appendChild(td);
      });
      return tr;
    });
    // at the readout: the digit each model picks and its lead, which compare across scales
    if (readout && (mw || tw)) {
      var row = function (n, a, b, same) {
        var tr = el("tr", a === null || b === null ? "alone" : same ? "same" : "differs");
        [el("td", "", n), el("td", "num", a === null ? "\u2014" : a),
         el("td", "num", b === null ? "\u2014" : b),
         el("td", "", a === null || b === null ? "in one only" : same ? "same" :
                      n !== "lead" ? "differs" : C.scales_differ ? "each in its own units" :
                      "differs" + by(num(mw[1]), num(tw[1])) + outcome)]
          .forEach(function (td) { tr.appendChild(td); });
        return tr;
      };
      body.unshift(row("lead", mw ? thin(shown(mw[1])) : null, tw ? thin(shown(tw[1])) : null,
                       mw && tw && mw[1] === tw[1]),
                   row("winner", mw ? mw[0] : null, tw ? tw[0] : null,
                       mw && tw && mw[0] === tw[0]));
      body.unshift(body.splice(1, 1)[0]);  // the winner first, then the lead
    }
    // two designs that name no slot alike: each one's lanes a table of its own, side by
    // side, so that no row pairs two slots that have nothing to do with each other
    // at the readout the winner, the lead and the logits stay in one shared table above them
    var apartLists = Boolean(rows && !common && m.pos !== null);
    var shared = function (tr) {
      var n = tr.firstChild.textContent;
      return readout && (n === "winner" || n === "lead" || logit(n));
    };
    document.getElementById("cmp-lanes").hidden = apartLists && !readout;
    document.getElementById("cmp-lanes-apart").hidden = !apartLists;
    if (apartLists) {
      var own = function (table, model, pos, rowsOf, cell) {
        var head = el("tr", "");
        [el("th", "", model + "'s slot"), el("th", "", model + " at position " + pos)]
          .forEach(function (th) { head.appendChild(th); });
        var thead = el("thead", ""), tbody = el("tbody", "");
        thead.appendChild(head);
        rowsOf.forEach(function (tr) {
          var out = el("tr", "");
          out.appendChild(tr.children[0]);
          out.appendChild(tr.children[cell - 1]);  // the name moved: the value shifted left
          tbody.appendChild(out);
        });
        fill(table, [thead, tbody]);
      };
      var lanes = body.filter(function (tr) { return !shared(tr); });
      var ours = lanes.filter(function (tr) { return mine[tr.firstChild.textContent]; });
      var others = lanes.filter(function (tr) { return !mine[tr.firstChild.textContent]; });
      own("cmp-lanes-a", C.own_model, state.pos, ours, 1);  // moves the cells: split first
      own("cmp-lanes-b", C.model, m.pos, others, 2);
      body = body.filter(shared);
    }
    fill("cmp-lanes-body", body);
  }

  // ------------------------------------------------------------------ tour
  // numbers as a reader types them: 1e-20, 10^-20, 10⁻²⁰, 2.3·10^17, −10, 1/26
  function ascii(text) {  // superscript exponents as ^-20, a minus sign as -
    var sup = "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079";
    return text.replace(/[\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+/g, function (m) {
      return "^" + m.split("").map(function (ch) {
        var k = sup.indexOf(ch); return k === 0 ? "-" : String(k - 1);
      }).join("");
    }).replace(/[\u2212\u2013]/g, "-");
  }
  function plain(text) {  // and m·10^e as me
    return ascii(text).replace(/\s*[\u00b7*x\u00d7]\s*10\^/g, "e")
      .replace(/(^|[^0-9.e])10\^/g, "$11e");
  }
  // the value of typed arithmetic ("-(1000/26)*3.5*1e8", "e^-40*10^-24"): numbers as
  // numbersIn reads them, + - * / ^, brackets and e; null for anything else
  function evaluate(text) {
    var t = ascii(text).replace(/[\u00b7\u00d7]/g, "*").replace(/\s+/g, ""), at = 0;
    function peek() { return t.charAt(at); }
    function atom() {
      var m = /^[0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?/.exec(t.slice(at));
      if (m) { at += m[0].length; return parseFloat(m[0]); }
      if (peek() === "e") { at++; return Math.E; }
      if (peek() === "(") {
        at++;
        var v = sum();
        if (peek() !== ")") { throw new Error("bracket"); }
        at++;
        return v;
      }
      throw new Error("not arithmetic");
    }
    function raised() {
      var base = atom();
      if (peek() !== "^") { return base; }
      at++;
      return Math.pow(base, signed());
    }
    function signed() {
      if (peek() === "-") { at++; return -signed(); }
      if (peek() === "+") { at++; return signed(); }
      return raised();
    }
    function product() {
      var v = signed();
      while (peek() === "*" || peek() === "/") {
        var op = t.charAt(at++), w = signed();
        v = op === "*" ? v * w : v / w;
      }
      return v;
    }
    function sum() {
      var v = product();
      while (peek() === "+" || peek() === "-") {
        var op = t.charAt(at++), w = product();
        v = op === "+" ? v + w : v - w;
      }
      return v;
    }
    try {
      var v = sum();
      return at === t.length && t.length && isFinite(v) ? v : null;
    } catch (e) {
      return null;
    }
  }
  function numbersIn(text) {
    var t = plain(text);
    var out = [], re = /-?[0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?(?:\/[0-9]+)?/g, m;
    while ((m = re.exec(t)) !== null) {
      var parts = m[0].split("/");
      out.push(parts.length === 2 ? parseFloat(parts[0]) / parseFloat(parts[1])
                                  : parseFloat(parts[0]));
    }
    return out;
  }
  // the last step's rule, in BigInt: the tilt P/10⁶ beats the margin 2(gap − b − ℓ) when
  // the gap below the next multiple of P is under P/(2·10⁶) + b + ℓ, b + ℓ about ½; the
  // tilt from 4 to 5 is half as large: under P/(4·10⁶) + ½
  function failing(expect, text) {
    var m = /^\s*([0-9]+)\s*\+\s*([0-9]+)\s*$/.exec(text);
    if (!m || m[1].length > expect.digits || m[2].length > expect.digits) {
      return "type A+B, each of at most " + expect.digits + " digits";
    }
    if (expect.run) {  // no rule the page can apply: the run decides
      return "the page cannot run " + expect.model + "; run " + expect.run.replace(
        "A+B", m[1] + "+" + m[2]) + ": it writes " + (BigInt(m[1]) + BigInt(m[2])).toString() +
        " when it adds right, and warns and exits with status 1 when it does not.";
    }
    var s = BigInt(m[1]) + BigInt(m[2]), found = [], near = null;
    for (var k = expect.digits; k >= 0; k--) {
      var P = 10n ** BigInt(k), r = s % (10n * P), gap = P - r % P, above = r / P + 1n;
      var per = above === 5n ? 4000000n : 2000000n;  // 2·10⁶ over the tilt, in units of P
      if (above >= 5n && above <= 9n && gap * per < P + per / 2n) {
        found.push(power(k));
      }
      // the place to explain: a 9 (no rival) before a 4 (half the tilt) before the highest
      var rank = above === 10n ? 2 : above === 5n ? 1 : 0;
      if (gap * 2000000n < P + 1000000n && (near === null || rank > near[2])) {
        near = [k, above - 1n, rank];
      }
    }
    // just below a multiple of 10^k, yet no candidate: the digit at place k says why
    var why = near === null ? " Try one whose sum is just below a multiple of a power of ten." :
      " Its sum is just below a multiple of " + power(near[0]) + ", but the digit there is " +
      near[1].toString() + (near[1] === 9n ? ", which has no larger rival" :
                            near[1] === 4n ? ", and from 4 to 5 the tilt is half as large" :
                            ": the tilt lifts only a 4 to 8 to the digit above") +
      ". Try one where it is 4 to 8" + (near[1] === 4n ? ", or a 4 nearer the boundary." : ".");
    return found.length ? "a candidate: the tilt may win at place " + found.join(", ") +
           ". Run tinyadder " + m[1] + "+" + m[2] + " to see (a wrong sum warns, exit 1)."
                        : "no candidate: by this rule the published model writes " +
           s.toString() + "." + why;
  }
  function close(expect, w, g, i) {
    // whether typed g counts as the run's w, the step's i-th number
    if (expect.kind === "integers") { return g === w; }
    if (expect.kind === "numbers" && expect.sig && expect.sig[i]) {
      // to sig significant digits: within half a unit of w's last one
      var unit = Math.pow(10, Math.floor(Math.log10(Math.abs(w))) - expect.sig[i] + 1);
      return Math.abs(g - w) <= 0.5 * unit * (1 + 1e-9);
    }
    if (expect.kind === "numbers") {  // within 0.5 %, or the step's stated tolerance
      return Math.abs(g - w) <= Math.max(0.005 * Math.abs(w), expect.tol || 0);
    }
    var sign = expect.signs ? expect.signs[i] : 1;  // magnitudes: the decade and sign
    return g !== 0 && (g < 0 ? -1 : 1) === sign &&
           Math.abs(Math.log10(Math.abs(g)) - w) <= 1;  // within a decade
  }
  function verdict(expect, text) {
    if (!expect) { return ""; }
    if (expect.kind === "failing") { return failing(expect, text); }
    var right = false, said = (expect.texts || expect.values).join(", "), hint = "";
    if (expect.kind === "words") {
      var words = text.toLowerCase().split(/[^a-z0-9_]+/);
      right = expect.values.every(function (w) { return words.indexOf(w) >= 0; });
      if (right && expect.groups) {  // one group per head, in head order (a tie: any order)
        var from = 0;
        right = expect.groups.every(function (group) {
          var at = group.map(function (w) { return words.indexOf(w, from); });
          if (at.some(function (i) { return i < 0; })) { return false; }
          from = Math.min.apply(null, at) + 1;
          return true;
        });
        hint = right ? "" : "the labels are the run's, but not in head order";
      }
    } else {
      var typed = numbersIn(text), want = expect.values || expect.logs;
      // the answer is the first numbers typed or, after working ("10*(6+3+1)-0 = 100",
      // "8.5, so 8"), the last ones; or the value of arithmetic typed ("-(1000/26)*3.5*1e8")
      var worked = text.split("=").map(evaluate).filter(function (v) { return v !== null; });
      var tries = [typed.slice(0, want.length), typed.slice(-want.length)].concat(
        want.length === 1 ? worked.map(function (v) { return [v]; }) : []);
      right = tries.some(function (got) {
        return got.length === want.length && want.every(function (w, i) {
          return close(expect, w, got[i], i);
        });
      });
      var key = function (list) { return list.slice().sort().join(" "); };
      // a step that names its parts grades those typed, part by part (missHint)
      if (!right && want.length > 1 && typed.length < want.length && !expect.what) {
        hint = want.length + " numbers asked" + (expect.form ? " (" + expect.form + ")" : "") +
               ", " + typed.length + " given";
      } else if (!right && want.length > 1 && expect.kind === "integers" &&
                 key(typed.slice(0, want.length)) === key(want)) {
        hint = "the right numbers in the wrong order" +
               (expect.form ? " (" + expect.form + ")" : "");
      }
    }
    if (right) {
      var dust = dustSaid(expect), rule = expect.rule ? "; " + expect.rule : "";
      return dust ? "right: " + dust.slice(0, -1) + rule + ")" :
        "right: the run says " + said + (expect.rule ? " (" + expect.rule + ")" : "");
    }
    // a miss gives a hint, never the run's value: that waits for "show the answer"
    return "not quite: " + (hint || missHint(expect, text)) +
           (expect.rule ? " (" + expect.rule + ")" : "") +
           ". Try again, or press show the answer.";
  }
  // a value the exact run keeps but a float cannot hold (10^-227150166: tour.dust), which a
  // right guess of 0 matched: '0 (exact dust: ≈ −2.56·10⁻²²⁷¹⁵⁰¹⁶⁶, too small for a float)'
  function dustSaid(expect) {
    var values = expect.kind === "numbers" && expect.values, texts = expect.texts || [];
    if (!values || values.length !== 1 || values[0] !== 0 || !/\u00b710\u207b/.test(texts[0])) {
      return "";
    }
    return "0 (exact dust: " + texts[0].replace(/([0-9]\.[0-9]{2})[0-9]*/, "$1") +
           ", too small for a float)";
  }
  function missHint(expect, text) {
    // which typed value is off: a measured quantity says which way (a sign, too high, too
    // low); a digit or a count says only that it is not the one (which way would give it
    // away); a step that names its parts (expect.what) grades each part typed
    if (expect.kind === "words") {  // a step whose words are not token labels says where
      return expect.where || "not the run's labels: read them again under the tokens";
    }
    var typed = numbersIn(text), want = expect.values || expect.logs, what = expect.what;
    if (typed.length < want.length && !(what && typed.length)) {
      return want.length + (want.length > 1 ? " numbers" : " number") + " asked";
    }
    var last = want.length === 1 ? evaluate(text.split("=").pop()) : null;  // worked out
    var got = last !== null ? [last] : typed.length < want.length ? typed :
              typed.slice(-want.length), names = ["the first", "the second", "the third"];
    var off = want.map(function (w, i) {
      var g = got[i], part = what ? "the " + what[i] : null;
      var name = part || (want.length > 1 ? (names[i] || "number " + (i + 1)) + " number"
                                          : "your number");
      if (g === undefined) { return name + ": not given yet"; }
      if (close(expect, w, g, i)) { return what && want.length > 1 ? name + " is right" : ""; }
      if (what && /^(digit|count)$/.test(what[i])) { return "not " + part; }
      if (expect.logs) { return name + " is off by more than a decade or in sign"; }
      // the sign only when the size is right: a flipped guess of the wrong size is
      // still too high or too low
      var way = g !== 0 && w !== 0 && (g < 0) !== (w < 0) && close(expect, -w, g, i) ?
                "check the sign" : "too " + (g > w ? "high" : "low");
      return what && want.length > 1 ? name + " is not yet (" + way + ")" :
             way === "check the sign" ? name + ": " + way : name + " is " + way;
    }).filter(function (t) { return t; });
    return (off.length ? off.join("; ") : "not within the tolerance");
  }
  var scrollCard = false;
  var openedStep = 0;  // the tour step whose answer a check or 'show the answer' has opened
  var rightStep = 0;  // the tour step a check has found right
  // a tour step whose answer is not yet open: the views print no value it asks for
  function concealed() { return state.tour > 0 && openedStep !== state.tour; }
  // the FFN's table holds the answer of a step that says so (units: false): it waits on that
  // step until a check and on every step before it (a check there opens only its own answer)
  function unitsHeld() {  // the number of the step that holds the FFN's table back, or 0
    if (!state.tour) { return 0; }
    for (var i = 0; i < TOUR.length; i++) {
      if (TOUR[i].units === false &&
          (i + 1 > state.tour || (i + 1 === state.tour && concealed()))) { return i + 1; }
    }
    return 0;
  }
  function drawTour() {
    var card = document.getElementById("tour");
    var sections = document.querySelectorAll("main > section");
    document.body.classList.toggle("touring", state.tour > 0);
    if (!card) { return; }
    card.hidden = !state.tour;
    if (!state.tour) {
      sections.forEach(function (s) { s.classList.remove("dim", "veiled"); });
      shownStep = openedStep = rightStep = 0;
      return;
    }
    var step = TOUR[state.tour - 1], view = document.getElementById("view-" + step.view);
    sections.forEach(function (s) { s.classList.toggle("dim", s !== view); });
    view.parentNode.insertBefore(card, view);
    setText("tour-title", step.title);
    setText("tour-text", step.text);
    setText("tour-question", step.question);
    setText("tour-answer", step.answer);
    // how to type a step's several parts (learner25 3): a space between, said in the box
    var parts = step.expect ? (step.expect.values || step.expect.logs || []).length : 0;
    document.getElementById("tour-guess").placeholder = parts > 1 ? parts + " " +
      (step.expect.kind === "words" ? "labels" : "numbers") + ", a space between" : "";
    each("[data-step-doc]", function (s) {
      s.hidden = parseInt(s.dataset.stepDoc, 10) !== state.tour;
    });
    each("[data-step]", function (b) {
      b.setAttribute("aria-current", String(parseInt(b.dataset.step, 10) === state.tour));
    });
    document.getElementById("tour-prev").disabled = state.tour === 1;
    document.getElementById("tour-next").disabled = state.tour === TOUR.length;
    if (shownStep !== state.tour) {  // a new step: its answer hidden, the card in view
      // a view that prints the step's answer stays veiled until a check or the answer
      sections.forEach(function (s) { s.classList.remove("veiled"); });
      openedStep = rightStep = 0;
      if (step.veil) { view.classList.add("veiled"); }
      // another view that prints the step's value (a rounded one, one with a power of ten,
      // four digits or two decimals: not a digit or a label, which every view prints) waits
      // with it
      var printed = ((step.expect || {}).texts || (step.expect || {}).values || []).map(
        String).filter(function (t) { return /[~\u2248\u00b7]|\d{4}|\d\.\d\d/.test(t); });
      each("main > section[id^='view-']", function (s) {
        if (s !== view && (printed.some(function (t) { return s.textContent.indexOf(t) >= 0; }) ||
                           (step.veils || []).indexOf(s.id) >= 0)) {  // a step's own list
          s.classList.add("veiled");
        }
      });
      document.getElementById("tour-answer").hidden = true;
      document.getElementById("tour-reveal").hidden = false;
      document.getElementById("tour-guess").value = "";
      setText("tour-verdict", "");
      document.querySelector(".guess").hidden = !step.expect;
      scrollCard = true;  // once the status line is written: the controls' height is final
      shownStep = state.tour;
    }
  }
  function goStep(k) {
    if (k < 1 || k > TOUR.length) { return; }
    enterStep(k);
    notes = [];
    render();
  }

  // a small FFN (views.hidden_units): each hidden unit at the selected position, what goes
  // into its activation and what comes out, with the formulas where the weights are plain
  function drawHidden() {
    var box = document.getElementById("hidden-units");
    if (!box) { return; }
    var tok = D.tokens[state.pos];
    var nodes = [];
    var held = unitsHeld();
    if (held) {  // the table holds that step's answer
      fill("hidden-units", [el("p", "note ffn-said", "The FFN's hidden units: shown once " +
        "you check a guess or show the answer" + (held === state.tour ? "." :
          " at step " + TOUR[held - 1].title.replace(/^(\d+)\. (.*)$/, "$1 ($2)") + "."))]);
      return;
    }
    Object.keys(D.hidden).forEach(function (stage) {
      var h = D.hidden[stage], table = el("table", "cmp ffn");
      var input = STAGES[STAGES.indexOf(stage) - 1], at = STAGES.indexOf(state.stage);
      table.setAttribute("data-stage", stage);
      // the units read the stream after the stage before theirs, not the one selected
      nodes.push(el("p", "note ffn-said", stage + ": the FFN's " + h.units.length +
        " hidden units at position " + state.pos + " (" + tok.label + ")" +
        (stage === state.stage ? ", the stage selected" : "") + ", reading the stream " +
        "after " + input + " (the FFN's input" + (at < STAGES.indexOf(input) ?
          "; the stage selected, " + state.stage + ", comes before it" : "") +
        "): what goes into each " +
        "unit's " + h.act + (h.linear ? " (the gate), its linear branch, and what comes out, " +
                             h.act + "(gate)\u00b7linear" : ", what comes out") +
        (h.writes ? ", and what its output adds to the stream" : "") +
        (h.down ? ", its down weight and what out\u00b7weight adds to the stream" : "")));
      // a relu without a linear branch passes a positive input unchanged: one column says
      // what comes out, and of a unit that does not fire its input ('0 (off, in −9.99)')
      var bare = h.act === "relu" && !h.linear;
      var head = el("tr", "");
      ["unit"].concat(h.into ? ["into the " + h.act] : [],
                      bare ? [] : [h.linear ? "gate" : "value in"],
                      h.linear ? ["linear branch" + (h.linear_of ? ": " + h.linear_of : "")] : [],
                      [bare ? "out = relu(in)" : "out"],
                      h.writes ? ["adds to the stream"] : [],
                      h.down ? ["down weight", "adds out\u00b7weight"] : []).forEach(function (t) {
        head.appendChild(el("th", "", t));
      });
      table.appendChild(head);
      h.units.forEach(function (u, i) {
        var out = h.post[state.pos][i], tr = el("tr", /^-?0(\.0)?$/.test(out) ? "alone" : "");
        var off = bare && /^-?0(\.0)?$/.test(out);
        [el("td", "", u)].concat(h.into ? [el("td", "", h.into[i])] : [],
          bare ? [] : [el("td", "num", shown(h.pre[state.pos][i]))],
          h.linear ? [el("td", "num", shown(h.linear[state.pos][i]))] : [],
          [el("td", "num", off ? "0 (off, in " + shown(h.pre[state.pos][i]) + ")" : shown(out))],
          h.writes ? [el("td", "", h.writes[i])] : [],
          h.down ? [el("td", "num", h.down[i].map(function (p) {
                      return shown(p[1][2]) + " into " + p[0]; }).join(", ")),
                    el("td", "num", slotValues(h.adds[state.pos][i], " += "))] : [])
          .forEach(function (td) { tr.appendChild(td); });
        table.appendChild(tr);
      });
      nodes.push(table);
      // the stream after the FFN is what a tour step asks: its sum waits for the answer
      if (h.down) { nodes.push(el("p", "note ffn-wrote", concealed() ? "All units together, " +
        "through the down projection: shown once you check a guess or show the answer." :
        wrote(h, stage))); }
    });
    fill("hidden-units", nodes);
  }

  function slotValues(pairs, joint) {  // [[slot, cell]] as 'x1 += −594.335'
    return pairs.map(function (p) { return p[0] + joint + shown(p[1][2]); }).join(", ");
  }
  // what the FFN's units write in all at the selected position, and each slot before and
  // after it: x1: 100.002 after L0.attn + (−99.0098) = 0.992544 after L0.mlp
  function wrote(h, stage) {
    var before = STAGES[STAGES.indexOf(stage) - 1], w = h.wrote[state.pos];
    return "All units together, through the down projection: " +
      Object.keys(w).map(function (slot) {
        var cells = function (s) { return D.residual[s].rows[slot].cells[state.pos][2]; };
        return slot + ": " + shown(cells(before)) + " after " + before + " + (" +
               shown(w[slot][2]) + ") = " + shown(cells(stage)) + " after " + stage;
      }).join("; ") + ".";
  }

  function render() {
    drawAttention();
    drawResidual();
    each("[data-stage-doc]", function (s) {  // the residual view's section for its stage
      s.hidden = s.dataset.stageDoc !== state.stage;
    });
    drawHidden();
    drawPositionParts();
    drawVariant();
    drawCompare();
    drawTour();
    document.getElementById("status").textContent = statusText();
    if (scrollCard) {  // a new tour step: its card below the sticky controls, however many
      scrollCard = false;  // lines they wrap to on a narrow screen
      var card = document.getElementById("tour");
      card.style.scrollMarginTop = (document.getElementById("controls").offsetHeight + 8) +
                                   "px";
      card.scrollIntoView({block: "start"});
    }
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
  // the tracer's '~4.24835e-20' as the page writes every number: '~4.24835·10⁻²⁰'
  // svg.shown: the sign as the formulas write it, U+2212
  function minus(text) {  // svg.minus: '~-60.97' -> '\u2248 \u221260.97'
    var m = /^(~?)-(~?)(.*)$/.exec(text);
    return m ? (m[1] || m[2] ? "\u2248 " : "") + "\u2212" + m[3] : text;
  }
  function shown(text) {
    var m = /^(-?~?-?)([0-9.]+)e\+?(-?[0-9]+)$/.exec(text);
    if (!m) { return minus(text); }
    return minus(m[1]) + (m[2] === "1" ? "" : m[2] + "\u00b7") + power(parseInt(m[3], 10));
  }
  // a formula's case at the position that predicts s_k (explore.column_cases: [k, [[symbol,
  // 'a1 = 6'], ..., ['s_k', 's1 = 0']]]): the digits and carries the formula names, then s_k,
  // 'the digit predicted' where the formula does not name it
  function caseLine(text, c) {
    var named = c[1].slice(0, -1).filter(function (d) { return text.indexOf(d[0]) >= 0; });
    var last = c[1][c[1].length - 1];
    return "here k = " + c[0] + ": " + named.map(function (d) { return d[1]; }).concat(
      [last[1] + (text.indexOf(last[0]) >= 0 ? "" : " (the digit predicted)")]).join(", ");
  }
  // a residual value as the grid prints it: a fraction as its decimal (figures.value_text)
  function decimal(row, p) {
    return row.dec[p] !== undefined ? row.dec[p] : shown(row.cells[p][2]);
  }

  // a value as a grid cell prints it, small and turned upright: a rounded one marked '≈ '
  // whatever its sign, as a '~' there reads as a minus (explore.GRID_ROUNDED)
  function cellValue(row, p) { return decimal(row, p).replace(/^~/, "\u2248 "); }

  function cellText(cell, dec) {
    return (dec !== undefined ? dec + " = " + cell[2] : shown(cell[2])) +
           (cell[1] === null ? "" : "   (log10 |x| = " + cell[1].toFixed(4) + ")");
  }

  function attentionHover(ev) {
    var svg = ev.currentTarget, p = svgPoint(svg, ev);
    var c = parseFloat(svg.dataset.c), x0 = parseFloat(svg.dataset.x0),
        y0 = parseFloat(svg.dataset.y0), sink = parseFloat(svg.dataset.sink);
    var q = Math.floor((p.y - y0) / c), k = Math.floor((p.x - x0) / c);
    var onSink = p.x >= sink && p.x < sink + c;
    // a key right of the diagonal is masked: not the sink, which has its own column
    if (q < 0 || q >= T || k < 0 || (k > q && !onSink)) { hideTip(); return null; }
    var head = D.heads[state.head], row = head.cells[state.mode][q];
    if (onSink) {
      k = q + 1;
      if (state.mode !== "softmax1" || head.kind !== "softmax1") { hideTip(); return null; }
      showTip(ev, [state.head + " query " + q + ": sink (weight to nothing)", cellText(row[k]),
                   "= 1 \u2212 the row's weights (softmax1's '+1')"]);
    } else {
      showTip(ev, [state.head + " query " + q + " ('" + D.tokens[q].text + "'), key " + k +
                   " ('" + D.tokens[k].text + "'), " + state.mode,
                   "weight " + cellText(row[k]), "score " + head.score[q][k],
                   state.mode === "softmax1" ? "= exp(score) / (1 + \u03a3 exp(scores))"
                                             : "= exp(score) / \u03a3 exp(scores)"]);
    }
    return q;
  }

  // compare._general: an added term reads after what the slot held ("+ layer 1's ...")
  function whole(form) { return /^\+ /.test(form) ? "what it held before " + form : form; }
  function meaning(name, pos) {
    var stage = D.meanings[state.stage];
    if (!stage || !stage[name]) { return null; }
    // the second form at a position that predicts a digit of the sum
    var d = decision(pos), text = stage[name][d || D.tokens[pos].next_place !== null ? 1 : 0];
    return whole(text).replace(/\{i2\}/g, String(pos + 2))
               .replace(/\{P\}/g, d ? power(d.power) : "")
               .replace(/\{x\}/g, d ? shown(d.x_text) : "");
  }

  function residualHover(ev) {
    var svg = ev.currentTarget, p = svgPoint(svg, ev);
    var c = parseFloat(svg.dataset.c), hs = svg.dataset.hs.split(",").map(parseFloat),
        x0 = parseFloat(svg.dataset.x0), ys = svg.dataset.ys.split(",").map(parseFloat);
    var pos = Math.floor((p.x - x0) / c), r = -1;
    for (var i = 0; i < ys.length; i++) { if (p.y >= ys[i] && p.y < ys[i] + hs[i]) { r = i; } }
    if (r >= ys.length - LOGITS && state.stage !== "readout") { r = -1; }  // folded away
    if (pos < 0 || pos >= T || r < 0) { hideTip(); return null; }
    var name = D.resid_rows[r], row = D.residual[state.stage].rows[name];
    if (!row) { showTip(ev, [name + ": not in the stream after " + state.stage]); return pos; }
    var lines = [name + " at position " + pos + " ('" + D.tokens[pos].text + "') after " +
                 state.stage, cellText(row.cells[pos], row.dec[pos])];
    var what = meaning(name, pos);
    if (what) { lines.push(what); }
    // a digit's embedding, its formula with the digit put in, where the slot still holds it
    var tok = D.tokens[pos], form = D.embedded[name];
    if (form && /^[0-9]$/.test(tok.text) && tok.role !== "special" &&
        (state.stage === "embed" || (what && /^as embedded:/.test(what)))) {
      lines.push("= " + form.replace(/\{d\}/g, tok.text) + ", the embedding of the digit " +
                 tok.text);
    }
    if (what && D.cases[pos] && what.indexOf("_k") >= 0) {
      lines.push(caseLine(what, D.cases[pos]));
    }
    if (row.intended[pos]) { lines.push("intended " + shown(row.intended[pos])); }
    if (row.gap && row.gap[pos] !== "0") {
      lines.push("behind the winner by " + shown(row.gap[pos].replace(/^-/, "")) +
                 " (logit − the largest)");
    }
    if (row.changed.charAt(pos) === "1") {
      lines.push(state.stage === "readout" ? "the winner" : "changed by this stage");
    }
    if (row.departs.charAt(pos) === "1") { lines.push("departs from its intended value"); }
    showTip(ev, lines);
    return pos;
  }

  function paramHover(ev) {
    var k = ev.target.dataset ? ev.target.dataset.param : undefined;
    each("#params-svg .lane", function (l) { l.classList.remove("on", "rd"); });
    each("#params-svg .chip", function (ch) { ch.classList.remove("on"); });
    if (k === undefined) { hideTip(); return; }
    var P = D.params[parseInt(k, 10)];
    ev.target.classList.add("on");
    each("#params-svg .lane", function (l) {
      if (P.writes.indexOf(l.dataset.slot) >= 0) { l.classList.add("on"); }
      else if (P.reads.indexOf(l.dataset.slot) >= 0) { l.classList.add("rd"); }
    });
    showTip(ev, [P.tensor + " = " + P.value + "   (" + P.part + ")",
                 "entries: " + P.entries.join(", "),
                 "reads: " + (P.reads.join(", ") || "no slot (a bias or a token row)"),
                 "writes: " + (P.writes.join(", ") ||
                               (P.heads.length ? "no slot: it sets the scores of " +
                                                 P.heads.join(", ") : "-")),
                 "ledger: " + P.rule]);
  }

  // ------------------------------------------------------------------ wiring
  function on(id, event, fn) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener(event, fn); }
  }
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
    on("params-svg", "mouseover", paramHover);
    on("params-svg", "mouseleave", function () { paramHover({target: {}}); });
    each("#tokens button", function (b) {
      b.addEventListener("click", function () { set({pos: parseInt(b.dataset.pos, 10)}); });
    });
    each("[data-head]", function (b) {
      b.addEventListener("click", function () { set({head: b.dataset.head}); });
    });
    each("button[data-variant]", function (b) {
      b.addEventListener("click", function () { set({variant: b.dataset.variant}); });
    });
    each("[data-step]", function (b) {
      b.addEventListener("click", function () { goStep(parseInt(b.dataset.step, 10)); });
    });
    on("compare", "change", function (ev) { set({compare: ev.target.checked}); });
    on("mode", "change", function (ev) {
      set({mode: ev.target.checked ? "softmax" : "softmax1"});
    });
    on("stage", "input", function (ev) {
      set({stage: STAGES[parseInt(ev.target.value, 10)]});
    });
    on("prev", "click", function () { set({pos: state.pos - 1}); });
    on("next", "click", function () { set({pos: state.pos + 1}); });
    on("tour-start", "click", function () { goStep(1); });
    on("tour-end", "click", function () { set({tour: 0}); });
    on("tour-prev", "click", function () { goStep(state.tour - 1); });
    on("tour-next", "click", function () { goStep(state.tour + 1); });
    var unveil = function () {
      each("main > section.veiled", function (s) { s.classList.remove("veiled"); });
    };
    on("tour-check", "click", function () {
      unveil();
      openedStep = state.tour;
      render();
      var said = verdict(TOUR[state.tour - 1].expect,
                         document.getElementById("tour-guess").value);
      setText("tour-verdict", said);
      if (/^right/.test(said)) {  // the status line may now say all, as after the answer
        rightStep = state.tour;
        document.getElementById("status").textContent = statusText();
      }
    });
    on("tour-guess", "keydown", function (ev) {
      if (ev.key === "Enter") { document.getElementById("tour-check").click(); }
      ev.stopPropagation();  // typing is not navigating: the arrow keys stay in the box
    });
    on("tour-reveal", "click", function () {
      unveil();
      openedStep = state.tour;
      render();
      document.getElementById("tour-answer").hidden = false;
      document.getElementById("tour-reveal").hidden = true;
      document.getElementById("status").textContent = statusText();  // now it may say all
    });
    document.addEventListener("keydown", function (ev) {
      var tag = ev.target && ev.target.tagName;
      if (tag === "INPUT" && ev.target.type === "range") { return; }
      var step = ev.key === "ArrowLeft" ? -1 : ev.key === "ArrowRight" ? 1 : 0;
      if (!step) { return; }
      if (state.tour) { goStep(state.tour + step); }  // in the tour the arrows move its steps
      else { set({pos: state.pos + step}); }
      ev.preventDefault();
    });
    window.addEventListener("hashchange", function () {
      if (/^#wt-/.test(window.location.hash)) { return; }  // the reader follows a link
      readHash(); render(); scrollToView();
    });
    render();  // notes from readHash() stay in the status line until the next change
    scrollToView();
    document.body.dataset.ready = "yes";
  }
  try { init(); }
  catch (e) { report("script error: " + (e && e.stack ? e.stack : e)); }
}());
