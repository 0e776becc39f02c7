// Typesets the formulas that pymdownx.arithmatex marks (generic mode: \( \) inline, \[ \] display)
// with the KaTeX served alongside the site.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll(".arithmatex").forEach(function (element) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true },
      ],
      throwOnError: false,
    });
  });
});
