// The OpenAPI 3 document (docs/openapi.json), embedded into the binary at build time.
#pragma once

namespace gpurent {
const char* openapi_document();
}
