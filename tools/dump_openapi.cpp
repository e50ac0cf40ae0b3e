// dump_openapi: prints the OpenAPI 3.1 document genhost serves at GET /v1/openapi.json, built
// from the schemas and catalog compiled into the binary (the lint test of tests/node feeds it to
// Redocly). Usage: dump_openapi [--compact]
#include "genhost/api/openapi.hpp"

#include <cstring>
#include <exception>
#include <iostream>

int main(int argc, char** argv) {
    bool compact = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--compact") == 0) {
            compact = true;
        } else {
            std::cerr << "usage: dump_openapi [--compact]\n";
            return 2;
        }
    }
    try {
        const auto documents = genhost::api::EmbeddedSchemaDocuments();
        const auto schemas = genhost::validate::SchemaSet::Compile(documents);
        const auto catalog = genhost::catalog::Catalog::LoadEmbedded();
        const auto doc = genhost::api::BuildOpenApi(*schemas, *catalog, documents);
        std::cout << (compact ? doc.dump() : doc.dump(2)) << '\n';
    } catch (const std::exception& e) {
        std::cerr << "dump_openapi: " << e.what() << '\n';
        return 1;
    }
    return std::cout.good() ? 0 : 1;
}
