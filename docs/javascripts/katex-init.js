// Render the formulas marked by pymdownx.arithmatex (generic mode) with the bundled KaTeX.
// Only the elements arithmatex made are searched, so a "$" or "\(" in prose or code is left
// alone. Material's document$ also fires after an instant-navigation page change.
(function () {
  "use strict";
  function render(root) {
    root.querySelectorAll(".arithmatex").forEach(function (element) {
      renderMathInElement(element, {
        delimiters: [
          { left: "\\(", right: "\\)", display: false },
          { left: "\\[", right: "\\]", display: true },
        ],
        throwOnError: false,
      });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function () { render(document.body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  }
})();
