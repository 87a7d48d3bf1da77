#!/usr/bin/env bash
# Property-based check of the running service against its own OpenAPI document, with Schemathesis (PyPI):
#   Scripts/check/contract.sh [EXAMPLES_PER_OPERATION]     default 300, release build
#   Scripts/check/contract.sh --quick                      25 per operation on the debug build (what CI runs)
#   Scripts/check/contract.sh [--quick] --postgres [N]     the same with the server over PostgreSQL + PostGIS
#                                                          (a fresh database on Scripts/postgres.sh's server)
# With VICINITY_CONTRACT_REPORT=DIR, each run's requests and answers are kept in DIR as HAR files (main.har,
# setPassword.har, deleteMe.har, signOut.har), to see which answers the generated requests reached.
# Starts a server over the shipped data on loopback and generates thousands of requests from /openapi.yaml,
# valid and invalid, guests' and signed-in (a user signed up for the check sends its token). It fails when
# any answer is a 5xx, has a status, content type, header or body the document does not declare, mishandles a
# method the document does not list, or when a signed-in operation answers without a valid token.
# The server mails through the test relay (Tests/MailTestSupport/smtp_server.py, aiosmtpd) with its defaults
# for a relay (`--require-email`, votes for verified voters unless they say otherwise), so that sign-up codes,
# sign-in codes and address checks answer as they do in service (201, 202, 409, 429), not only 503; the codes
# the setup needs are read from the relay's folder.
# Left out of the main run: GET /v1/events, whose answer never ends (its own tests read it over a socket).
# Run apart, each with a token of its own: a new password and deleting one's account, each for an account
# signed in with a mailed code a moment before (so that they succeed without the current password, and the
# deletion deletes nobody the main run needs), before the main run; and sign-out, last, since it ends the
# session it is sent with.
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
report() {  # NAME: the options that keep a run's requests and answers, when asked to
    [ -z "${VICINITY_CONTRACT_REPORT:-}" ] || echo "--report har --report-har-path $VICINITY_CONTRACT_REPORT/$1.har"
}
source Scripts/lib/shipped-server.sh
prepare_shipped_database "$configuration"
start_mail_relay
start_server "$port" "$shipped_db"

# Everyone signed up here gives an address (the server requires one); the mails the relay took for each are
# counted here, so that mailed_code reads the right one.
declare -A mails=()
confirm() {  # TOKEN ADDRESS: confirms the address with the code mailed to it last
    mails[$2]=$(( ${mails[$2]:-0} + 1 ))
    call POST /v1/me/email-verification/confirm "$1" "{\"code\":\"$(mailed_code "$2" "${mails[$2]}")\"}" >/dev/null
}
# A token opened with a mailed code: it sets a new password or deletes its account without the current one.
signed_in_by_code() {  # USERNAME
    local address="$1@contract.test" first
    first="$(sign_up_and_in "$1" "$address")"
    confirm "$first" "$address"
    curl -sf -X POST "$shipped_server/v1/sign-in-codes" -H 'Content-Type: application/json' -d "{\"email\":\"$address\"}" >/dev/null
    mails[$address]=$(( ${mails[$address]} + 1 ))
    curl -sf -X POST "$shipped_server/v1/sessions" -H 'Content-Type: application/json' \
        -d "{\"email\":\"$address\",\"code\":\"$(mailed_code "$address" "${mails[$address]}")\"}" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])'
}

# The checker has friends, so that the friend operations answer with real friends and not only 404: random ids
# name nobody, so the operations on one friend are pinned to real ids (the contract of those answers is what is
# checked; ids themselves are fuzzed by the Swift tests). One friend is there to be removed, one request to be
# accepted or withdrawn. The vote operations are pinned to real votes in the same way.
token="$(sign_up_and_in contract-checker contract-checker@contract.test)"
confirm "$token" contract-checker@contract.test
# A second address waits for its code, so that asking for a new code is answered 202 (until the limits).
call PATCH /v1/me "$token" '{"email":"contract-checker.next@contract.test"}' >/dev/null
leaving="$(sign_up_and_in contract-leaver contract-leaver@contract.test)"
me="$(call GET /v1/me "$token" "" id)"
friend_ids=()
for name in contract-friend contract-removable; do
    friend_token="$(sign_up_and_in "$name" "$name@contract.test")"
    request="$(call POST /v1/friend-requests "$friend_token" "{\"to\":\"$me\"}" id)"
    friend_ids+=("$(call POST "/v1/friend-requests/$request/accept" "$token" "" id)")
    call PUT /v1/me/position "$friend_token" '{"lat":33.779842,"lon":-118.112526,"status":"in the lab"}' >/dev/null
done
asking="$(sign_up_and_in contract-asking contract-asking@contract.test)"
confirm "$asking" contract-asking@contract.test
pending="$(call POST /v1/friend-requests "$asking" "{\"to\":\"$me\"}" id)"
call PUT /v1/me/position "$token" '{"lat":33.777267,"lon":-118.114777}' >/dev/null
# Signed in by code for the runs apart (a new password; deleting one's account). The one to be deleted is
# named apart, so that its ballot makes no name conflict, and leaves traces the main run reads once it is
# gone: a ballot in the checker's finished vote, whose result then lists it naming nobody, and a vote it
# opened, which the checker voted in and which is then called off, naming no initiator.
resetting="$(signed_in_by_code contract-resetting)"
deleting="$(signed_in_by_code contract-deleting)"
call PATCH /v1/me "$deleting" '{"first_name":"Leaving"}' >/dev/null
call PUT /v1/me/position "$deleting" '{"lat":33.777267,"lon":-118.114777}' >/dev/null

# Votes of the checker: an open one with two ballots from people of one name (everyone signed up here is
# "Contract Check" but the one to be deleted); a finished one with a result; and two that settle their name
# conflict, since their two ballots fill them: one whose conflicts and a ballot to void are real (one
# voter's address verified, so that the masked address shows), one to publish. Closing, cancelling,
# extending (a timed vote) and editing (a vote without ballots) each have a vote of their own, so that one
# operation's requests never change the vote another operation is checked against. They take unverified
# voters too, as most voters here are.
vote_body='{"subject":"Contract check","options":["Yes","No"],"participants":1000,"password":"482913","duration":"permanent","verified_only":false}'
open_vote="$(call POST /v1/votes "$token" "$vote_body" id)"
call POST "/v1/votes/$open_vote/ballots" "$asking" '{"password":"482913","option":0}' >/dev/null
call POST "/v1/votes/$open_vote/ballots" "$leaving" '{"password":"482913","option":1}' >/dev/null
finished_vote="$(call POST /v1/votes "$token" "${vote_body/1000/2}" id)"
call POST "/v1/votes/$finished_vote/ballots" "$asking" '{"password":"482913","option":1}' >/dev/null
call POST "/v1/votes/$finished_vote/ballots" "$deleting" '{"password":"482913","option":0}' >/dev/null
[ "$(call GET "/v1/votes/$finished_vote" "$token" "" state)" = finished ] \
    || { echo "vote $finished_vote is not finished, though its two voters, named apart, fill it" >&2; exit 1; }
deleted_vote="$(call POST /v1/votes "$deleting" "$vote_body" id)"
call POST "/v1/votes/$deleted_vote/ballots" "$token" '{"password":"482913","option":0}' >/dev/null
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
# Before the main run, whose failed sign-ins lock this client address out of checking passwords for a while.
st run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $resetting" --include-operation-id setPassword \
    --max-examples "$examples" --workers 1 --seed 2026 $(report setPassword)
st run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $deleting" --include-operation-id deleteMe \
    --max-examples "$examples" --workers 1 --seed 2026 $(report deleteMe)
[ "$(curl -s -o /dev/null -w '%{http_code}' "$shipped_server/v1/me" -H "Authorization: Bearer $deleting")" = 401 ] \
    || { echo "contract-deleting was not deleted: no request of the deletion run reached 204" >&2; exit 1; }
[ "$(call GET "/v1/votes/$deleted_vote" "$token" "" state)" = cancelled ] \
    || { echo "vote $deleted_vote was not called off when its initiator's account was deleted" >&2; exit 1; }
# One worker: Python 3.11's ast module is not safe across threads (CPython gh-106905), and Hypothesis parses
# source in each worker, so two workers now and then fail a run with "AST constructor recursion depth mismatch".
st --config-file "$work/schemathesis.toml" run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $token" --exclude-operation-id events --exclude-operation-id signOut \
    --exclude-operation-id setPassword --exclude-operation-id deleteMe \
    --max-examples "$examples" --workers 1 --seed 2026 $(report main)
st run "$shipped_server/openapi.yaml" --url "$shipped_server" --checks "$checks" \
    --header "Authorization: Bearer $leaving" --include-operation-id signOut \
    --max-examples "$examples" --workers 1 --seed 2026 $(report signOut)
