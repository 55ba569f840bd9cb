#!/usr/bin/env bash
# Smoke test of the running local Keycloak against what the platform needs from the realm
# (run `bash test/infra/keycloak.sh start` first). Uses curl, node and openssl; exits non-zero on
# the first failed check.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

URL=$(env_get KEYCLOAK_URL)
[ -n "$URL" ] || die "KEYCLOAK_URL is not in $ENV_FILE: start keycloak first"
REALM=$(env_get KEYCLOAK_REALM)
SVC_ID=$(env_get KEYCLOAK_SERVICES_CLIENT_ID)
SVC_SECRET=$(env_get KEYCLOAK_SERVICES_CLIENT_SECRET)
WEB_ID=$(env_get KEYCLOAK_WEB_CLIENT_ID)
WEB_SECRET=$(env_get KEYCLOAK_WEB_CLIENT_SECRET)
ADMIN_USER=$(env_get KEYCLOAK_ADMIN_USERNAME)
ADMIN_PASSWORD=$(env_get KEYCLOAK_ADMIN_PASSWORD)
OIDC="$URL/realms/$REALM/protocol/openid-connect"
API="$URL/admin/realms/$REALM"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { printf '  ok   %s\n' "$*"; }
fail() { printf '  FAIL %s\n' "$*" >&2; exit 1; }
# json EXPR: evaluate a JS expression over the JSON on stdin (bound to `j`), print the result.
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=s?JSON.parse(s):null;const v=eval(process.argv[1]);console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"; }
# jwt: payload of the JWT on stdin as JSON.
jwt() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(Buffer.from(s.trim().split(".")[1],"base64url").toString()))'; }
uri() { node -e 'console.log(encodeURIComponent(process.argv[1]))' "$1"; }
# http METHOD URL [curl args...]: body to $TMP/body, prints the status code.
http() { local m=$1 u=$2; shift 2; curl -sS -o "$TMP/body" -w '%{http_code}' -X "$m" "$@" "$u"; }
expect() { local want=$1 got=$2 what=$3; [ "$got" = "$want" ] && ok "$what ($got)" || fail "$what: HTTP $got, expected $want: $(head -c 300 "$TMP/body")"; }

echo "Keycloak $URL, realm $REALM"

echo "client credentials ($SVC_ID)"
code=$(http POST "$OIDC/token" -d grant_type=client_credentials -d client_id="$SVC_ID" --data-urlencode client_secret="$SVC_SECRET")
expect 200 "$code" "token"
SVC_TOKEN=$(json j.access_token < "$TMP/body")
roles=$(echo "$SVC_TOKEN" | jwt | json '(j.resource_access["realm-management"]||{}).roles.sort().join(",")')
[ "$roles" = "manage-users,query-groups,query-users,view-realm,view-users" ] && ok "service account roles: $roles" || fail "service account roles: $roles"
AUTH=(-H "Authorization: Bearer $SVC_TOKEN")

echo "realm settings"
http GET "$API" "${AUTH[@]}" > /dev/null
[ "$(json 'String(j.bruteForceProtected)' < "$TMP/body")" = false ] && ok "brute force protection off" || fail "brute force protection is on"
ok "access token lifespan $(json j.accessTokenLifespan < "$TMP/body")s, locales $(json 'j.supportedLocales.join(",")' < "$TMP/body"), default $(json j.defaultLocale < "$TMP/body")"
http GET "$API/users/profile" "${AUTH[@]}" > /dev/null
[ "$(json 'j.attributes.some(a=>a.name==="phoneNumber")' < "$TMP/body")" = true ] && ok "user profile declares phoneNumber" || fail "phoneNumber is not declared"

echo "user provisioning with the services token"
NAME="smoke-$(date +%s)-$RANDOM"
code=$(http POST "$API/users" "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d "{\"username\":\"$NAME\",\"enabled\":true,\"attributes\":{\"phoneNumber\":[\"+15551234567\"],\"locale\":[\"de\"],\"notDeclared\":[\"x\"]}}")
expect 201 "$code" "create user $NAME (no email or names)"
http GET "$API/users?username=$NAME&exact=true" "${AUTH[@]}" > /dev/null
USER_ID=$(json 'j[0].id' < "$TMP/body")
http GET "$API/users/$USER_ID" "${AUTH[@]}" > /dev/null
attrs=$(json 'j.attributes' < "$TMP/body")
[ "$(json 'j.attributes.phoneNumber[0]+"/"+j.attributes.locale[0]' < "$TMP/body")" = "+15551234567/de" ] \
  && ok "attributes kept: $attrs (an undeclared one is dropped)" || fail "attributes: $attrs"
http GET "$API/groups?search=clients&exact=true" "${AUTH[@]}" > /dev/null
GROUP_ID=$(json 'j.find(g=>g.name==="clients").id' < "$TMP/body")
expect 204 "$(http PUT "$API/users/$USER_ID/groups/$GROUP_ID" "${AUTH[@]}")" "add to group clients"
PASSWORD="Otp-$(openssl rand -hex 12)"
expect 204 "$(http PUT "$API/users/$USER_ID/reset-password" "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d "{\"type\":\"password\",\"value\":\"$PASSWORD\",\"temporary\":false}")" "reset password"

echo "password grant ($SVC_ID) for the new user"
code=$(http POST "$OIDC/token" -d grant_type=password -d client_id="$SVC_ID" --data-urlencode client_secret="$SVC_SECRET" \
  -d username="$NAME" --data-urlencode password="$PASSWORD" -d scope=openid)
expect 200 "$code" "token"
for t in access_token id_token; do
  claims=$(json "j.$t" < "$TMP/body" | jwt | json '({phone_number:j.phone_number,locale:j.locale})')
  [ "$claims" = '{"phone_number":"+15551234567","locale":"de"}' ] && ok "$t claims $claims" || fail "$t claims $claims"
done
USER_TOKEN=$(json j.access_token < "$TMP/body")
http GET "$OIDC/userinfo" -H "Authorization: Bearer $USER_TOKEN" > /dev/null
[ "$(json 'j.phone_number+"/"+j.locale' < "$TMP/body")" = "+15551234567/de" ] && ok "userinfo has phone_number and locale" || fail "userinfo: $(cat "$TMP/body")"

echo "realm admin $ADMIN_USER on admin-cli"
code=$(http POST "$OIDC/token" -d grant_type=password -d client_id=admin-cli -d username="$ADMIN_USER" --data-urlencode password="$ADMIN_PASSWORD")
expect 200 "$code" "token"
ADMIN_AUTH=(-H "Authorization: Bearer $(json j.access_token < "$TMP/body")")
expect 200 "$(http GET "$API/users?max=50" "${ADMIN_AUTH[@]}")" "list users ($(json 'j.length' < "$TMP/body") users)"
http GET "$API/groups?search=subscribers&exact=true" "${ADMIN_AUTH[@]}" > /dev/null
SUB_ID=$(json 'j.find(g=>g.name==="subscribers").id' < "$TMP/body")
expect 204 "$(http PUT "$API/users/$USER_ID/groups/$SUB_ID" "${ADMIN_AUTH[@]}")" "add to group subscribers"

echo "browser login client ($WEB_ID)"
VERIFIER=$(openssl rand -hex 32)
CHALLENGE=$(printf '%s' "$VERIFIER" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
auth_url() { echo "$OIDC/auth?client_id=$WEB_ID&response_type=code&scope=openid&state=st&redirect_uri=$(uri "$1")$2"; }
for redirect in "https://127.0.0.1:$((20000 + RANDOM % 40000))/redirect" "https://localhost:5555/redirect"; do
  code=$(http GET "$(auth_url "$redirect" "&code_challenge=$CHALLENGE&code_challenge_method=S256")")
  grep -q 'id="kc-form-login"' "$TMP/body" && ok "S256 + $redirect: login form ($code)" || fail "S256 + $redirect: HTTP $code $(grep -o 'Invalid parameter: [a-z_]*' "$TMP/body")"
done
for redirect in "https://evil.example/redirect" "http://127.0.0.1:41234/redirect" "https://localhost:41234/redirect"; do
  code=$(http GET "$(auth_url "$redirect" "&code_challenge=$CHALLENGE&code_challenge_method=S256")")
  grep -q 'Invalid parameter: redirect_uri' "$TMP/body" && ok "$redirect refused ($code)" || fail "$redirect accepted ($code)"
done
loc=$(curl -sS -o /dev/null -w '%{redirect_url}' "$(auth_url "https://127.0.0.1:41234/redirect" "")")
case "$loc" in *error=invalid_request*code_challenge*) ok "without code_challenge: refused (invalid_request)" ;; *) fail "without code_challenge: $loc" ;; esac
code=$(http POST "$OIDC/token" -d grant_type=password -d client_id="$WEB_ID" --data-urlencode client_secret="$WEB_SECRET" \
  -d username="$NAME" --data-urlencode password="$PASSWORD")
[ "$code" != 200 ] && ok "password grant refused for $WEB_ID ($code $(json j.error < "$TMP/body"))" || fail "password grant allowed for $WEB_ID"

loc=$(curl -sS -o "$TMP/body" -w '%{http_code} %{redirect_url}' "$OIDC/auth?client_id=$SVC_ID&response_type=code&scope=openid&redirect_uri=$(uri https://127.0.0.1:41234/redirect)")
case "$loc" in 2*) fail "browser login allowed for $SVC_ID" ;; *) ok "browser login refused for $SVC_ID (${loc%% *})" ;; esac

http DELETE "$API/users/$USER_ID" "${AUTH[@]}" > /dev/null
echo "all checks passed"
