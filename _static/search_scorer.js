/* The book's search scorer (html_search_scorer in _config.yml; Sphinx puts it before
   searchtools.js, which keeps its own Scorer only when none is defined).

   Sphinx's weights are kept; one rule is added: the chapters explain ideas, the library
   reference and the exercise sets use them, so a hit in the reference or an exercise set
   ranks below a hit of the same kind in a chapter.  A search for a library name still
   finds its reference entry first: an object's name matches score far above any word of
   the text (the reference's object hits are not lowered below a chapter's word hits).
   The glossary pages (notation, bibliography) name a term without explaining it: their
   hits come after every other page's. */
var GLOSSARIES = ["notation", "bibliography", "genindex"];

var Scorer = {
  score: (result) => {
    const [docname, , , descr, score] = result;
    const isObject = descr !== null && descr !== undefined && descr !== "";
    if (docname.startsWith("reference/") && !isObject) return score / 2;
    // The glossary pages list every term once, without explaining it: after every page
    // that does (their order among themselves is kept).
    if (GLOSSARIES.includes(docname)) return score - 1000;
    if (docname.startsWith("exercises/") || docname.startsWith("solutions/")) return score * 0.75;
    return score;
  },

  // Sphinx's defaults (sphinx/themes/basic/static/searchtools.js, Sphinx 7.4).
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {
    0: 15,
    1: 5,
    2: -5,
  },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
