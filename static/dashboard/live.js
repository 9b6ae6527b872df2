/* Follows Mycel as it writes, on the Thread page and the Threads list.

   Polls the page's live endpoint (#live[data-live-url]) with the last ETag in If-None-Match: while nothing
   changed the answer is a bodiless 304, so an open page costs a stat of the store per poll (why polling
   and not SSE: mycel_dashboard/screens/live/pulse.py). Polls stop while the tab is hidden.

   On a change nothing the operator reads moves: the Thread page refreshes its facts, chart and rail from
   one fetch of its own URL (the URL holds the view, filter and page), and its timeline either grows below
   (when its end is on screen) or waits behind an "N new" pill; the Threads list re-fetches its rows with the
   same URL (sort, filter, page kept) unless the pointer or focus is on them, when a pill offers it. */
(function () {
  "use strict";

  var box = document.getElementById("live");
  if (!box || !window.fetch || !window.DOMParser) { return; }
  var kind = box.dataset.liveKind;
  var pill = document.getElementById("live-new");
  var etag = null;
  var busy = false;
  var timer = null;
  var waiting = null; // the Thread page: a newer timeline held behind the pill

  function byId(id) { return document.getElementById(id); }

  function interval() {
    var status = box.querySelector("[data-interval]");
    var ms = Number(status && status.dataset.interval);
    return ms > 0 ? ms : 3000;
  }

  function parse(text) { return new DOMParser().parseFromString(text, "text/html"); }

  function swapIn(old, fresh) {
    // Imported, then handed to htmx so the new markup's hx-* attributes work as a swap's would.
    var node = document.importNode(fresh, true);
    old.replaceWith(node);
    if (window.htmx) { window.htmx.process(node); }
    return node;
  }

  function etagOf(response) {
    return (response.headers.get("ETag") || "").replace(/^W\//, "").replace(/"/g, "");
  }

  function pollUrl() {
    var url = box.dataset.liveUrl;
    if (kind !== "threads") { return url; }
    var rows = byId("thread-rows");
    var params = new URLSearchParams();
    if (rows) {
      params.set("since", rows.dataset.liveSince || "");
      params.set("known", rows.dataset.liveKnown || "");
    }
    return url + "?" + params.toString();
  }

  function schedule(ms) {
    window.clearTimeout(timer);
    timer = window.setTimeout(poll, ms === undefined ? interval() : ms);
  }

  function poll() {
    if (document.hidden || busy) { schedule(); return; }
    busy = true;
    var headers = { "HX-Request": "true" };
    if (etag) { headers["If-None-Match"] = '"' + etag + '"'; }
    // no-store: the browser must not answer from its cache nor add its own conditional headers.
    fetch(pollUrl(), { headers: headers, cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (response.status === 304) { return null; }
        var tag = etagOf(response);
        return response.text().then(function (text) { return { tag: tag, doc: parse(text) }; });
      })
      .then(function (answer) {
        if (!answer) { return null; }
        return kind === "threads" ? threadsChanged(answer) : threadChanged(answer);
      })
      .catch(function () { /* offline or restarting: the next poll tries again */ })
      .then(function () { busy = false; schedule(); });
  }

  function showPill(words, onClick) {
    if (!pill) { return; }
    pill.textContent = words;
    pill.hidden = false;
    pill.onclick = function () { pill.hidden = true; onClick(); };
  }

  function hidePill() { if (pill) { pill.hidden = true; } }

  // -- the Thread page ------------------------------------------------------------------------------

  function shownMessages() {
    var timeline = byId("timeline");
    return Number((timeline && timeline.dataset.liveMessages) || 0);
  }

  function threadChanged(answer) {
    var fresh = answer.doc.getElementById("live-thread");
    var status = byId("live-thread");
    if (!fresh || !status) { return null; } // not our partial (signed out, say): keep what is shown
    var headMoved = fresh.dataset.head !== status.dataset.head;
    swapIn(status, fresh);
    etag = answer.tag || null;
    return headMoved ? refreshThread() : null;
  }

  function refreshThread() {
    var before = shownMessages();
    return fetch(window.location.pathname + window.location.search, { cache: "no-store", credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (text) {
        if (!text) { return; }
        var doc = parse(text);
        var facts = document.querySelector("dl.facts");
        var freshFacts = doc.querySelector("dl.facts");
        if (facts && freshFacts) { swapIn(facts, freshFacts); }
        ["rail", "thread-bytes"].forEach(function (id) {
          var old = byId(id);
          var fresh = doc.getElementById(id);
          if (!old || !fresh) { return; }
          var node = swapIn(old, fresh);
          if (window.mycelCharts) { node.querySelectorAll("[data-plotly]").forEach(window.mycelCharts.redraw); }
        });
        redrawCharts(doc);
        var timeline = doc.getElementById("timeline");
        if (!timeline) { return; }
        var added = Number(timeline.dataset.liveMessages || 0) - before;
        if (endInView()) {
          placeTimeline(timeline);
        } else {
          waiting = timeline;
          showPill(added > 0 ? added + " new message" + (added === 1 ? "" : "s") + " ↓" : "Timeline updated ↓", function () {
            placeTimeline(waiting);
            var first = byId("msg-" + before);
            if (!first) { return; }
            if (window.mycelTimeline) { window.mycelTimeline.revealMessage(first); } // a folded run (timeline.js)
            first.scrollIntoView({ block: "start" });
          });
        }
      });
  }

  function endInView() {
    var timeline = byId("timeline");
    return !timeline || timeline.getBoundingClientRect().bottom <= window.innerHeight + 120;
  }

  function placeTimeline(fresh) {
    var old = byId("timeline");
    if (!old || !fresh) { return; }
    var y = window.scrollY; // what is above the end does not change: keep the reader where they are
    swapIn(old, fresh);
    window.scrollTo(window.scrollX, y);
    waiting = null;
    hidePill();
  }

  function redrawCharts(doc) {
    // Each chart's figure JSON is replaced and drawn again (charts.js), so the chart extends in place.
    document.querySelectorAll("[data-plotly]").forEach(function (element) {
      var id = element.dataset.plotly;
      var fresh = doc.getElementById(id);
      var source = byId(id);
      if (!fresh || !source) { return; }
      if (source.textContent === fresh.textContent) { return; }
      source.textContent = fresh.textContent;
      if (window.mycelCharts) { window.mycelCharts.redraw(element); }
    });
    var chart = byId("context-chart");
    var freshChart = doc.getElementById("context-chart");
    if (chart && freshChart && !chart.querySelector("[data-plotly]") && freshChart.querySelector("[data-plotly]")) {
      // The first model call: the card had no chart yet.
      var node = swapIn(chart, freshChart);
      if (window.mycelCharts) { node.querySelectorAll("[data-plotly]").forEach(window.mycelCharts.redraw); }
    }
  }

  // -- the Threads list -----------------------------------------------------------------------------

  function threadsChanged(answer) {
    var fresh = answer.doc.getElementById("threads-live-status");
    var status = byId("threads-live-status");
    if (!fresh || !status) { return null; }
    swapIn(status, fresh);
    etag = answer.tag || null;
    var added = Number(fresh.dataset.new || 0);
    var moved = Number(fresh.dataset.moved || 0);
    if (!added && !moved) { hidePill(); return null; }
    var rows = byId("thread-rows");
    if (rows && (rows.matches(":hover") || rows.contains(document.activeElement))) {
      var words = added ? added + " new" : moved + " updated";
      if (added && moved) { words += ", " + moved + " updated"; }
      showPill(words + " — show", refreshRows);
      return null;
    }
    refreshRows();
    return null;
  }

  function refreshRows() {
    hidePill();
    if (window.htmx) {
      window.htmx.ajax("GET", window.location.pathname + window.location.search, { target: "#thread-rows", swap: "outerHTML" });
    }
  }

  // -- start ----------------------------------------------------------------------------------------

  var first = byId("live-thread");
  if (kind === "thread" && first) { etag = first.dataset.etag || null; }
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { schedule(0); } });
  schedule();
})();
