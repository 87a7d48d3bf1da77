#!/usr/bin/env bash
# Property-based check of the running service against its own OpenAPI document, with Schemathesis (PyPI):
#   Scripts/check-contract.sh [EXAMPLES_PER_OPERATION]     default 300
# Starts a release server over the shipped data on loopback and generates thousands of requests from
# /openapi.yaml, valid and invalid. It fails when any answer is a 5xx, has a status, content type, header or
# body the document does not declare, or mishandles a method the document does not list.
# Not run here: positive_data_acceptance, because the category rule ("contains a letter or digit", in any
# script) has no JSON Schema pattern that every validator reads, and negative_data_rejection, because it
# does not count 414 (query string over 4 KiB) as a refusal.
set -euo pipefail
cd "$(dirname "$0")/.."
examples="${1:-300}"
port="${VICINITY_CONTRACT_PORT:-18081}"
command -v st >/dev/null || python3 -m pip install --quiet 'schemathesis>=4,<5'
source Scripts/lib/shipped-server.sh
start_shipped_server "$port"
st run "http://127.0.0.1:$port/openapi.yaml" --url "http://127.0.0.1:$port" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,unsupported_method,allow_header_conformance \
    --max-examples "$examples" --workers 2 --seed 2026
