#!/usr/bin/env bash
# Property-based check of the running service against its own OpenAPI document, with Schemathesis (PyPI):
#   Scripts/check/contract.sh [EXAMPLES_PER_OPERATION]     default 300, release build
#   Scripts/check/contract.sh --quick                      25 per operation on the debug build (what CI runs)
#   Scripts/check/contract.sh [--quick] --postgres [N]     the same with the server over PostgreSQL + PostGIS
#                                                          (a fresh database on Scripts/postgres.sh's server)
# Starts a server over the shipped data on loopback and generates thousands of requests from /openapi.yaml,
# valid and invalid, guests' and signed-in (a user signed up for the check sends its token). It fails when
# any answer is a 5xx, has a status, content type, header or body the document does not declare, mishandles a
# method the document does not list, or when a signed-in operation answers without a valid token.
# Left out: GET /v1/events, whose answer never ends (its own tests read it over a socket), and sign-out, which
# runs last with a token of its own, since it ends the session it is sent with.
# Not run here: positive_data_acceptance, because the category rule ("contains a letter or digit", in any
# script) has no JSON Schema pattern that every validator reads, and negative_data_rejection, because it
# does not count 414 (query string over 4 KiB) as a refusal.
set -euo pipefail
cd "$(dirname "$0")/../.."
examples=300
configuration=release
if [ "${1:-}" = "--quick" ]; then examples=25; configuration=debug; shift; fi
if [ "${1:-}" = "--postgres" ]; then
    VICINITY_SHIPPED_DB="$(Scripts/postgres.sh fresh vicinity_contract)"
    export VICINITY_SHIPPED_DB
    shift
fi
examples="${1:-$examples}"
port="${VICINITY_CONTRACT_PORT:-18081}"
python3 -c 'import schemathesis' 2>/dev/null || python3 -m pip install --quiet 'schemathesis>=4,<5'
# Through this Python rather than the `st` script, which pip may put outside $PATH.
st() { python3 -c 'import sys; from schemathesis.cli import schemathesis; sys.argv[0] = "st"; sys.exit(schemathesis())' "$@"; }
source Scripts/lib/shipped-server.sh
start_shipped_server "$port" "$configuration"

# The checker has friends, so that the friend operations answer with real friends and not only 404: random ids
# name nobody, so the operations on one friend are pinned to real ids (the contract of those answers is what is
# checked; ids themselves are fuzzed by the Swift tests). One friend is there to be removed, one request to be
# accepted or withdrawn. The vote operations are pinned to real votes in the same way.
token="$(sign_up_and_in contract-checker)"
leaving="$(sign_up_and_in contract-leaver)"
me="$(call GET /v1/me "$token" "" id)"
friend_ids=()
for name in contract-friend contract-removable; do
    friend_token="$(sign_up_and_in "$name")"
    request="$(call POST /v1/friend-requests "$friend_token" "{\"to\":\"$me\"}" id)"
    friend_ids+=("$(call POST "/v1/friend-requests/$request/accept" "$token" "" id)")
    call PUT /v1/me/position "$friend_token" '{"lat":33.779842,"lon":-118.112526,"status":"in the lab"}' >/dev/null
done
asking="$(sign_up_and_in contract-asking)"
pending="$(call POST /v1/friend-requests "$asking" "{\"to\":\"$me\"}" id)"
call PUT /v1/me/position "$token" '{"lat":33.777267,"lon":-118.114777}' >/dev/null

# Votes of the checker: an open one with two ballots from people of one name (everyone signed up here is
# "Contract Check"); a finished one with a result; and two that settle their name conflict, since their two
# ballots fill them: one whose conflicts and a ballot to void are real, one to publish. Closing, cancelling,
# extending (a timed vote) and editing (a vote without ballots) each have a vote of their own, so that one
# operation's requests never change the vote another operation is checked against.
vote_body='{"subject":"Contract check","options":["Yes","No"],"participants":1000,"password":"482913","duration":"permanent"}'
open_vote="$(call POST /v1/votes "$token" "$vote_body" id)"
call POST "/v1/votes/$open_vote/ballots" "$asking" '{"password":"482913","option":0}' >/dev/null
call POST "/v1/votes/$open_vote/ballots" "$leaving" '{"password":"482913","option":1}' >/dev/null
finished_vote="$(call POST /v1/votes "$token" "${vote_body/1000/1}" id)"
call POST "/v1/votes/$finished_vote/ballots" "$asking" '{"password":"482913","option":1}' >/dev/null
settling_vote="$(call POST /v1/votes "$token" "${vote_body/1000/2}" id)"
ballot="$(call POST "/v1/votes/$settling_vote/ballots" "$asking" '{"password":"482913","option":0}' ballot.id)"
call POST "/v1/votes/$settling_vote/ballots" "$leaving" '{"password":"482913","option":1}' >/dev/null
publish_vote="$(call POST /v1/votes "$token" "${vote_body/1000/2}" id)"
call POST "/v1/votes/$publish_vote/ballots" "$asking" '{"password":"482913","option":0}' >/dev/null
call POST "/v1/votes/$publish_vote/ballots" "$leaving" '{"password":"482913","option":1}' >/dev/null
for vote in "$settling_vote" "$publish_vote"; do
    state="$(call GET "/v1/votes/$vote" "$token" "" state)"
    [ "$state" = settling ] || { echo "vote $vote is $state, not settling: its voters are named alike" >&2; exit 1; }
done
close_vote="$(call POST /v1/votes "$token" "$vote_body" id)"
cancel_vote="$(call POST /v1/votes "$token" "$vote_body" id)"
extend_vote="$(call POST /v1/votes "$token" "${vote_body/permanent/60m}" id)"
edit_vote="$(call POST /v1/votes "$token" "$vote_body" id)"
cat > "$work/schemathesis.toml" <<TOML
[[operations]]
include-operation-id-regex = "^(friend|setSharing|friendDirection|poke)$"
parameters = { "path.id" = "${friend_ids[0]}" }

[[operations]]
include-operation-id = "unfriend"
parameters = { "path.id" = "${friend_ids[1]}" }

[[operations]]
include-operation-id-regex = "^(acceptFriendRequest|withdrawFriendRequest)$"
parameters = { "path.id" = "$pending" }

[[operations]]
include-operation-id-regex = "^(vote|castBallot)$"
parameters = { "path.id" = "$open_vote" }

[[operations]]
include-operation-id = "voteResult"
parameters = { "path.id" = "$finished_vote" }

[[operations]]
include-operation-id = "voteConflicts"
parameters = { "path.id" = "$settling_vote" }

[[operations]]
include-operation-id = "setBallotCounted"
parameters = { "path.id" = "$settling_vote", "path.ballot_id" = "$ballot" }

[[operations]]
include-operation-id = "publishVote"
parameters = { "path.id" = "$publish_vote" }

[[operations]]
include-operation-id = "closeVote"
parameters = { "path.id" = "$close_vote" }

[[operations]]
include-operation-id = "cancelVote"
parameters = { "path.id" = "$cancel_vote" }

[[operations]]
include-operation-id = "extendVote"
parameters = { "path.id" = "$extend_vote" }

[[operations]]
include-operation-id = "editVote"
parameters = { "path.id" = "$edit_vote" }
TOML

checks=not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance
checks+=,response_schema_conformance,unsupported_method,allow_header_conformance,ignored_auth
st --config-file "$work/schemathesis.toml" run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $token" --exclude-operation-id events --exclude-operation-id signOut \
    --max-examples "$examples" --workers 2 --seed 2026
st run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $leaving" --include-operation-id signOut \
    --max-examples "$examples" --workers 1 --seed 2026
