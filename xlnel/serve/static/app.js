// The xlnel web page: POST the text to /link, show the links in place and as a table.
// No build step and nothing loaded from elsewhere.
"use strict";

const $ = (id) => document.getElementById(id);
let lastResult = null;

// The browser page of a concept id: HPO terms, UMLS CUIs, MeSH descriptors and
// supplementary concepts; null for ids of other vocabularies.
function conceptUrl(id) {
  if (/^HP:\d{7}$/.test(id)) return "https://hpo.jax.org/browse/term/" + id;
  if (/^C\d{7}$/.test(id)) return "https://uts.nlm.nih.gov/uts/umls/concept/" + id;
  const mesh = id.replace(/^MESH:/i, "");
  if (/^[DC]\d{6}(\d{3})?$/.test(mesh)) return "https://meshb.nlm.nih.gov/record/ui?ui=" + mesh;
  return null;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) node.setAttribute(k, v);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
  return node;
}

function conceptLink(id) {
  const url = conceptUrl(id);
  return url ? el("a", {href: url, target: "_blank", rel: "noopener", class: "concept-id"}, id)
             : el("span", {class: "concept-id"}, id);
}

// Offsets are code points (Python's), not UTF-16 units: slice an array of code points.
function renderText(doc) {
  const chars = Array.from(doc.text);
  const out = $("highlighted");
  out.replaceChildren();
  let pos = 0;
  for (const ent of doc.entities) {
    out.append(chars.slice(pos, ent.start).join(""));
    const score = ent.score === undefined ? "" : ent.score.toFixed(3);
    const kind = entityType(ent);
    const label = el("bdi", {class: "label", dir: "ltr"},
                     conceptLink(ent.concept_id || ""), " ",
                     el("span", {class: "concept-name"}, ent.concept_name || ""), " ",
                     el("span", {class: "score"}, score),
                     kind ? el("span", {class: "concept-type"}, kind) : null);
    out.append(el("mark", {class: "mention", "data-start": ent.start, "data-end": ent.end,
                           "data-concept": ent.concept_id || "",
                           title: `${ent.concept_name || ""} (${kind || "no type"}),`
                                  + ` score ${score}, matched "${ent.matched_name || ""}"`
                                  + alternativesText(ent)},
                  chars.slice(ent.start, ent.end).join(""), label));
    pos = ent.end;
  }
  out.append(chars.slice(pos).join(""));
}

// the other concepts proposed for the span (linker.alternatives), for the tooltip
function alternativesText(ent) {
  if (!ent.alternatives || !ent.alternatives.length) return "";
  return "; also " + ent.alternatives.map(a => `${a.concept_id} (${a.score.toFixed(3)})`)
                                     .join(", ");
}

// the entity type the pipeline's training corpus gives the link, else the concept's KB type
function entityType(ent) {
  return ent.type || ent.concept_type;
}

function renderTable(doc) {
  const body = $("links").querySelector("tbody");
  body.replaceChildren();
  for (const ent of doc.entities) {
    body.append(el("tr", {},
      el("td", {}, ent.start), el("td", {}, ent.end), el("td", {dir: "auto"}, ent.text),
      el("td", {}, conceptLink(ent.concept_id || "")), el("td", {}, ent.concept_name || ""),
      el("td", {}, entityType(ent) || ""),
      el("td", {}, ent.score === undefined ? "" : ent.score.toFixed(3)),
      el("td", {dir: "auto"}, ent.matched_name || ""), el("td", {}, ent.matched_source || "")));
  }
}

async function link() {
  const text = $("text").value;
  $("status").textContent = "linking…";
  $("link").disabled = true;
  try {
    const response = await fetch("/link", {method: "POST",
      headers: {"content-type": "application/json"}, body: JSON.stringify({text})});
    const body = await response.json();
    if (!response.ok) {
      const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      throw new Error(`${response.status}: ${detail}`);
    }
    lastResult = body;
    renderText(body);
    renderTable(body);
    $("download").disabled = false;
    const n = body.entities.length;
    $("status").textContent = `${n} link${n === 1 ? "" : "s"}`;
  } catch (err) {
    $("status").textContent = "error " + err.message;
  } finally {
    $("link").disabled = false;
  }
}

function download() {
  if (!lastResult) return;
  const blob = new Blob([JSON.stringify(lastResult, null, 2)], {type: "application/json"});
  const a = el("a", {href: URL.createObjectURL(blob), download: "xlnel-links.json"});
  document.body.append(a);
  a.click();
  a.remove();
}

function show(view) {
  $("highlighted").hidden = view !== "text";
  $("table-view").hidden = view !== "table";
  $("show-text").classList.toggle("active", view === "text");
  $("show-table").classList.toggle("active", view === "table");
}

async function describePipeline() {
  try {
    const meta = await (await fetch("/metadata")).json();
    const base = (spec) => spec.split(/[\\/]/).pop();  // file names, not whole paths
    $("pipeline-info").textContent = `Pipeline ${base(meta.pipeline)}: text in `
      + `${meta.languages.join(", ")}, concepts of ${meta.knowledge_bases.map(base).join(", ")} `
      + `(xlnel ${meta.xlnel_version}).`;
  } catch (err) { /* the page works without it */ }
}

$("link").addEventListener("click", link);
$("text").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) link(); });
$("download").addEventListener("click", download);
$("show-text").addEventListener("click", () => show("text"));
$("show-table").addEventListener("click", () => show("table"));
describePipeline();
