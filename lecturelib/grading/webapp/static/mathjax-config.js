// MathJax for students' answers: only elements of class "math" are typeset (the body is
// ignored), the TeX input has tight limits against macro bombs, and no extension that
// could make links (html) or load code by name (require).
window.MathJax = {
  loader: {load: []},
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: false,
    maxMacros: 200,
    maxBuffer: 5 * 1024,
    packages: {"[-]": ["html", "require"]},
    autoload: {html: [], require: []}
  },
  options: {
    ignoreHtmlClass: "tex2jax_ignore",
    processHtmlClass: "math",
    enableMenu: false
  },
  startup: {typeset: true}
};
