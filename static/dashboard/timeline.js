/* A link to a message folded into a run of unchanged messages ("#msg-12") opens that run first, so the
   message it names is on screen: on page load, on every hash change, and for the chart's jumps (charts.js
   calls revealMessage before it scrolls). */
(function () {
  "use strict";

  function revealMessage(target) {
    for (var run = target && target.closest("details"); run; run = run.parentElement.closest("details")) {
      run.open = true;
    }
  }

  function revealHash() {
    if (!window.location.hash) { return; }
    var target = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    if (!target || !target.closest("details.unchanged-run")) { return; }
    revealMessage(target);
    target.scrollIntoView({ block: "start" });
  }

  window.mycelTimeline = { revealMessage: revealMessage };
  window.addEventListener("hashchange", revealHash);
  revealHash();
})();
