#!/usr/bin/env node
// openapi_lint, second half (tests/openapi/lint.sh runs Redocly first): docs/openapi.json is a
// valid OpenAPI 3.0 document for swagger-parser (its schema and every $ref), and Ajv compiles
// every component schema and every response schema (tests/openapi/schemas.mjs), as a client
// generator or a response validator would.
// Usage: node tests/openapi/validate_doc.mjs [path/to/openapi.json]. Exit status 0 when valid.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { repo, responseSchemas, schemaValidators } from "./schemas.mjs";

const file = path.resolve(process.argv[2] ?? path.join(repo, "docs/openapi.json"));
const SwaggerParser = createRequire(path.join(repo, "web/package.json"))("@apidevtools/swagger-parser");

let failed = 0;
const fail = (what) => { failed++; console.log(`FAIL ${what}`); };

try {
  const api = await SwaggerParser.validate(file);
  console.log(`ok   swagger-parser: ${api.openapi}, ${Object.keys(api.paths).length} paths, every $ref resolves`);
} catch (e) {
  fail(`swagger-parser: ${e.message}`);
}

const doc = JSON.parse(readFileSync(file, "utf8"));
try {
  const v = schemaValidators(doc);
  const n = v.compileAll();
  let responses = 0;
  for (const r of responseSchemas(doc)) {
    try {
      v.compile(r.schema);
      responses++;
    } catch (e) {
      fail(`Ajv cannot compile the schema of ${r.method} ${r.path} ${r.status} ${r.media}: ${e.message}`);
    }
  }
  console.log(`ok   Ajv compiled ${n / 2} component schemas and ${responses} response schemas`);
} catch (e) {
  fail(`Ajv cannot compile the component schemas: ${e.message}`);
}

console.log(failed ? `${failed} check(s) failed` : "docs/openapi.json: valid for swagger-parser and Ajv");
process.exit(failed ? 1 : 0);
