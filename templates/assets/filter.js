// Index filter: suite, testbed, branch (the history branch first), free text, change points.
// Plain DOM, no library; runs from file://.
(function () {
  "use strict";
  var suite = document.getElementById("f-suite");
  var testbed = document.getElementById("f-testbed");
  var branch = document.getElementById("f-branch");
  var text = document.getElementById("f-text");
  var changed = document.getElementById("f-changed");
  var worse = document.getElementById("f-worse");
  var count = document.getElementById("f-count");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#benchmarks tbody tr"));
  // The form only filters; Enter in the search box sends nothing.
  document.getElementById("filter").addEventListener("submit", function (e) {
    e.preventDefault();
  });
  function apply() {
    var s = suite.value;
    var words = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (tr) {
      var name = tr.getAttribute("data-name");
      var change = tr.getAttribute("data-change");
      var ok = (!s || tr.getAttribute("data-suite") === s) &&
        (!testbed.value || tr.getAttribute("data-testbed") === testbed.value) &&
        (!branch.value || tr.getAttribute("data-branch") === branch.value) &&
        words.every(function (w) { return name.indexOf(w) >= 0; }) &&
        (!changed.checked || change !== "") &&
        (!worse.checked || change === "worse");
      tr.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " shown";
  }
  [suite, testbed, branch, text, changed, worse].forEach(function (el) {
    el.addEventListener("input", apply);
    el.addEventListener("change", apply);
  });
  apply();
  document.body.setAttribute("data-ready", "1");
})();
