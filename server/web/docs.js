// The HTTP API's reference, drawn from the server's own OpenAPI document (/openapi.json):
// every operation with its parameters, request body, responses and the schemas they use.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A schema in a few words: "string", "list of MatchInfo", "integer ≥ 1 ≤ 100". */
function typeOf(schema) {
  if (!schema) return "any";
  if (schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return el("a", {href: `#schema-${name}`}, name);
  }
  if (schema.anyOf) {
    const parts = [];
    schema.anyOf.forEach((s, i) => { if (i) parts.push(" or "); parts.push(typeOf(s)); });
    return el("span", {}, parts);
  }
  if (schema.type === "array") return el("span", {}, "list of ", typeOf(schema.items));
  if (schema.type === "object" && schema.additionalProperties) {
    return el("span", {}, "map to ", typeOf(schema.additionalProperties));
  }
  const bounds = [];
  if (schema.minimum !== undefined) bounds.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) bounds.push(`≤ ${schema.maximum}`);
  if (schema.maxLength !== undefined) bounds.push(`length ≤ ${schema.maxLength}`);
  if (schema.pattern) bounds.push(`matching ${schema.pattern}`);
  if (schema.format) bounds.push(schema.format);
  return [schema.type || "any", ...bounds].join(" ");
}

function table(caption, headers, rows) {
  return el("div", {class: "scroll"}, el("table", {class: "stack"},
    el("caption", {}, caption),
    el("thead", {}, el("tr", {}, headers.map((x) => el("th", {scope: "col"}, x)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c, i) =>
      el("td", {"data-label": headers[i]}, c)))))));
}

function operation(path, method, op) {
  const id = `op-${method}-${path.replace(/[^a-z0-9]+/gi, "-")}`;
  const parts = [el("h3", {id}, el("code", {class: "verb"}, method.toUpperCase()), " ",
                    el("code", {}, path)),
                 el("p", {}, op.summary || "")];
  if (op.description) parts.push(el("p", {class: "muted pre"}, op.description));
  if (op.parameters && op.parameters.length) {
    parts.push(table("Parameters", ["name", "in", "type", "what"], op.parameters.map((p) => [
      el("code", {}, p.name) , p.in + (p.required ? ", required" : ""), typeOf(p.schema),
      p.description || (p.schema && p.schema.description) || ""])));
  }
  const body = op.requestBody && op.requestBody.content;
  if (body) {
    parts.push(el("p", {}, "Request body: ", typeOf(Object.values(body)[0].schema)));
  }
  parts.push(table("Responses", ["status", "what", "body"],
    Object.entries(op.responses || {}).map(([status, r]) => {
      const content = r.content || {};
      const first = Object.entries(content)[0];
      return [status, r.description || "", first ? [first[0], ": ", typeOf(first[1].schema)]
                                                  : ""];
    })));
  return el("section", {class: "panel", "aria-labelledby": id}, parts);
}

function schemaSection(name, schema) {
  const required = new Set(schema.required || []);
  const id = `schema-${name}`;
  const fields = Object.entries(schema.properties || {}).map(([field, s]) => [
    el("code", {}, field), typeOf(s), required.has(field) ? "yes" : "no",
    s.description || ""]);
  return el("section", {class: "panel", "aria-labelledby": id},
    el("h3", {id}, name), el("p", {class: "muted pre"}, schema.description || ""),
    fields.length ? table(`Fields of ${name}`, ["field", "type", "required", "what"], fields)
                  : el("p", {}, typeOf(schema)));
}

async function main() {
  const view = document.getElementById("view");
  const status = document.getElementById("docs-status");
  let spec;
  try {
    const response = await fetch("/openapi.json");
    spec = await response.json();
  } catch (err) {
    status.textContent = `Could not load /openapi.json: ${err}`;
    return;
  }
  const byTag = new Map();
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = (op.tags && op.tags[0]) || "other";
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag).push(operation(path, method, op));
    }
  }
  const toc = el("nav", {class: "panel", "aria-label": "contents"}, el("h2", {}, "Contents"),
    el("ul", {}, [...byTag.keys()].map((tag) => el("li", {}, el("a", {href: `#tag-${tag}`}, tag))),
      el("li", {}, el("a", {href: "#schemas"}, "schemas"))));
  const parts = [el("p", {class: "pre"}, spec.info.description || ""),
                 el("p", {}, "Version ", spec.info.version, " · the document itself: ",
                    el("a", {href: "/openapi.json"}, "/openapi.json")), toc];
  for (const [tag, ops] of byTag) {
    parts.push(el("h2", {id: `tag-${tag}`}, tag), ...ops);
  }
  parts.push(el("h2", {id: "schemas"}, "Schemas"), ...Object.entries(
    (spec.components && spec.components.schemas) || {}).map(([n, s]) => schemaSection(n, s)));
  status.textContent = `${Object.keys(spec.paths).length} paths.`;
  view.append(...parts);
  if (location.hash) {
    const target = document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  }
}

main();
