/* Config editor: each slider drives the number input beside it (the number input is what the form sends
   and what htmx listens to), and typing a number moves the slider. */
(function () {
  "use strict";

  function numberFor(range) {
    return document.getElementById(range.dataset.pair);
  }

  document.addEventListener("input", function (event) {
    var element = event.target;
    if (element.matches && element.matches("input[type=range][data-pair]")) {
      var number = numberFor(element);
      if (number && number.value !== element.value) {
        number.value = element.value;
        // htmx's "input changed" trigger sits on the number input.
        number.dispatchEvent(new Event("input", { bubbles: true }));
      }
    } else if (element.matches && element.matches("input[type=number]")) {
      var range = document.querySelector("input[type=range][data-pair='" + element.id + "']");
      if (range && element.value !== "") {
        var value = Number(element.value);
        if (value > Number(range.max)) { range.max = String(value); }
        if (value < Number(range.min)) { range.min = String(value); }
        range.value = element.value;
      }
    }
  });
})();
