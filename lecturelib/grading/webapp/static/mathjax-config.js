// MathJax for students' answers: only elements of class "math" are typeset (the body is
// ignored), the TeX input has tight limits against macro bombs, no extension that could
// make links or set attributes and styles (html, bbox, unicode, enclose, action) or load
// code by name (require), and the safe extension removes every href, class, id and style
// that TeX could still set (\mmlToken's attributes, say).
window.MathJax = {
  loader: {load: ["ui/safe"]},
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: false,
    maxMacros: 200,
    maxBuffer: 5 * 1024,
    packages: {"[-]": ["html", "require", "bbox", "unicode", "enclose", "action"]},
    autoload: {html: [], require: [], bbox: [], unicode: [], enclose: [], action: []}
  },
  options: {
    ignoreHtmlClass: "tex2jax_ignore",
    processHtmlClass: "math",
    enableMenu: false,
    safeOptions: {
      allow: {URLs: "none", classes: "none", cssIDs: "none", styles: "none"}
    }
  },
  startup: {typeset: true}
};
