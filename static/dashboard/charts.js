/* Draws every [data-plotly] element from the JSON script its attribute names, on first load and after
   every htmx swap. Figures arrive through Django's json_script, never as inline script. */
(function () {
  "use strict";

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function themed(layout) {
    var text = cssVar("--text") || "#1d1f21";
    var line = cssVar("--line") || "#e3e3df";
    var out = Object.assign({}, layout);
    out.paper_bgcolor = "rgba(0,0,0,0)";
    out.plot_bgcolor = "rgba(0,0,0,0)";
    out.font = { family: cssVar("--sans") || "system-ui, sans-serif", color: text, size: 12 };
    out.colorway = [cssVar("--muted"), cssVar("--info"), cssVar("--accent"), cssVar("--violet"),
      cssVar("--warn"), cssVar("--danger"), cssVar("--warn")];
    ["xaxis", "yaxis"].forEach(function (axis) {
      out[axis] = Object.assign({ gridcolor: line, zerolinecolor: line }, out[axis] || {});
    });
    out.shapes = (out.shapes || []).map(function (shape) {
      var color = shape.name === "limit" ? cssVar("--danger") : cssVar("--warn");
      return Object.assign({}, shape, { line: Object.assign({}, shape.line, { color: color }) });
    });
    return out;
  }

  function openCall(point) {
    if (!point || !point.customdata) { return; }
    var anchor = point.customdata[0];
    var url = point.customdata[1];
    var callUrl = point.customdata[2];
    if (callUrl) {
      // A point is one model call: open the page with its exact request.
      window.location.assign(callUrl);
      return;
    }
    var target = document.getElementById(anchor);
    if (target) {
      if (window.mycelTimeline) { window.mycelTimeline.revealMessage(target); }  // folded runs (timeline.js)
      target.scrollIntoView({ behavior: "smooth", block: "center" });
      target.classList.add("flash");
      window.setTimeout(function () { target.classList.remove("flash"); }, 1600);
      var focusable = target.querySelector("a, summary, button") || target;
      focusable.focus({ preventScroll: true });
      history.replaceState(history.state, "", "#" + anchor);
    } else if (url) {
      // The call is on another page of the timeline: go there.
      window.location.assign(url);
    }
  }

  function isLive(element) {
    // A page restored from htmx's history cache holds Plotly's markup without its event wiring.
    return typeof element.on === "function" && element._fullLayout !== undefined;
  }

  function draw(element) {
    if (typeof Plotly === "undefined" || isLive(element)) { return; }
    element.replaceChildren();
    var source = document.getElementById(element.dataset.plotly);
    if (!source) { return; }
    var figure;
    try {
      figure = JSON.parse(source.textContent);
    } catch (error) {
      element.textContent = "The chart data could not be read.";
      return;
    }
    Plotly.newPlot(element, figure.data, themed(figure.layout || {}), figure.config || { responsive: true });
    element.on("plotly_click", function (event) { openCall(event.points && event.points[0]); });
  }

  function drawAll(root) {
    var scope = root && root.querySelectorAll ? root : document;
    if (scope.matches && scope.matches("[data-plotly]")) { draw(scope); }
    scope.querySelectorAll("[data-plotly]").forEach(draw);
  }

  function redraw(element) {
    // live.js replaced the figure's JSON: draw it again in place (Plotly.react keeps the element's wiring).
    if (typeof Plotly === "undefined") { return; }
    if (!isLive(element)) { draw(element); return; }
    var source = document.getElementById(element.dataset.plotly);
    if (!source) { return; }
    try {
      var figure = JSON.parse(source.textContent);
      Plotly.react(element, figure.data, themed(figure.layout || {}), figure.config || { responsive: true });
    } catch (error) {
      element.textContent = "The chart data could not be read.";
    }
  }

  window.mycelCharts = { redraw: redraw };
  htmx.onLoad(drawAll);
  document.addEventListener("htmx:historyRestore", function () { drawAll(document); });

  if (window.matchMedia) {
    window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", function () {
      document.querySelectorAll("[data-plotly]").forEach(function (element) {
        if (isLive(element)) {
          Plotly.relayout(element, themed(element.layout || {}));
        }
      });
    });
  }
})();
