// docs/openapi.json's schemas as Ajv validators (shared by validate_doc.mjs and live_test.mjs).
//
// The document is OpenAPI 3.0: its schemas are JSON Schema with OpenAPI's `nullable` (which Ajv
// knows, and which needs a `type` beside it) and `example` (which Ajv does not). Each component
// schema becomes a $def of one JSON Schema 2020-12 document that Ajv 2020 compiles, with the
// formats of ajv-formats (date-time, email, uri, int64).
//
// Strict about objects, as src/server/api/openapi_test.cc is: an object schema that declares
// properties and says nothing about additionalProperties gets `unevaluatedProperties: false`, so a
// response key the document does not declare fails. An allOf member is left open (its siblings
// declare the other keys), so each component comes in two variants: `Name` (closed) and
// `Name.open` (as written, for allOf).
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, "../..");
const requireWeb = createRequire(path.join(repo, "web/package.json"));

export const DOC_ID = "https://gpurent.dev/openapi.json";
const DROPPED = new Set(["example"]);  // OpenAPI annotations that are not JSON Schema keywords

/** Resolves a local "#/..." reference of the document. */
export function resolveRef(doc, node) {
  if (!node || typeof node !== "object" || !("$ref" in node)) return node;
  const ref = node.$ref;
  if (!ref.startsWith("#/")) throw new Error(`only local references are expected: ${ref}`);
  let at = doc;
  for (const part of ref.slice(2).split("/")) {
    at = at?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (at === undefined) throw new Error(`unresolved reference ${ref}`);
  }
  return at;
}

function componentName(ref) {
  const m = /^#\/components\/schemas\/([^/]+)$/.exec(ref);
  if (!m) throw new Error(`a schema may only reference #/components/schemas/*: ${ref}`);
  return m[1];
}

/** Builds the Ajv instance; returns { ajv, compile(schema) } where schema is one of the document's. */
export function schemaValidators(doc) {
  const Ajv2020 = requireWeb("ajv/dist/2020").default;
  const addFormats = requireWeb("ajv-formats").default;
  const components = doc.components?.schemas ?? {};

  const hasProperties = (s, seen = new Set()) => {
    if (!s || typeof s !== "object") return false;
    if (s.$ref) {
      if (seen.has(s.$ref)) return false;
      seen.add(s.$ref);
      return hasProperties(resolveRef(doc, s), seen);
    }
    return "properties" in s || (s.allOf ?? []).some((p) => hasProperties(p, seen));
  };

  const convert = (s, closed) => {
    if (typeof s !== "object" || s === null) return s;
    if (s.$ref) return { $ref: `${DOC_ID}#/$defs/${componentName(s.$ref)}${closed ? "" : ".open"}` };
    const out = {};
    for (const [k, v] of Object.entries(s)) {
      if (DROPPED.has(k)) continue;
      if (k === "properties") out[k] = Object.fromEntries(Object.entries(v).map(([p, ps]) => [p, convert(ps, true)]));
      else if (k === "items" || k === "not") out[k] = convert(v, true);
      else if (k === "additionalProperties") out[k] = typeof v === "object" ? convert(v, true) : v;
      else if (k === "allOf") out[k] = v.map((p) => convert(p, false));
      else if (k === "oneOf" || k === "anyOf") out[k] = v.map((p) => convert(p, closed));
      else out[k] = v;
    }
    if (closed && !("additionalProperties" in s) && hasProperties(s)) out.unevaluatedProperties = false;
    return out;
  };

  const defs = {};
  for (const [name, s] of Object.entries(components)) {
    defs[name] = convert(s, true);
    defs[`${name}.open`] = convert(s, false);
  }
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, $defs: defs });
  const cache = new Map();
  return {
    ajv,
    /** The validator of one schema object of the document (inline or a $ref). */
    compile(schema) {
      const key = JSON.stringify(schema);
      if (!cache.has(key)) cache.set(key, ajv.compile(convert(schema, true)));
      return cache.get(key);
    },
    /** Compiles every component schema (both variants): throws on the first that does not compile. */
    compileAll() {
      for (const name of Object.keys(defs)) ajv.getSchema(`${DOC_ID}#/$defs/${name}`);
      return Object.keys(defs).length;
    },
  };
}

/** Every (method, path, status, media type, schema) response of the document. */
export function* responseSchemas(doc) {
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of ["get", "put", "post", "delete", "patch", "head", "options", "trace"]) {
      const op = item[method];
      if (!op) continue;
      for (const [status, r] of Object.entries(op.responses)) {
        const resp = resolveRef(doc, r);
        for (const [media, m] of Object.entries(resp.content ?? {}))
          if (m.schema) yield { method: method.toUpperCase(), path: p, status, media, schema: m.schema };
      }
    }
  }
}
