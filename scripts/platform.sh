#!/usr/bin/env bash
# `make up` / `make down`: the local dependencies plus every service, with local defaults.
#   bash scripts/platform.sh up     start (safe to run twice), wait until ready, print a table
#   bash scripts/platform.sh down   stop everything
# Each service runs from its build (npm start -w services/<name>), logs to .cache/run/<name>.log.
source "$(dirname "$0")/../test/infra/lib.sh"

# Services, in start order: name|management port. Each gets its settings from service_env.
SERVICES=("cache|9464" "graph-registry|9465" "auth|9466" "webhooks|9467")

# Local stand-ins for collaborators this project does not build (GraphQL gateway, localization).
GATEWAY_PORT=4000
LOCALIZATION_PORT=4001
# Fixed local development secrets; the same values `make demo` signs and authenticates with.
WEBHOOKS_KEY=local-webhooks-key
STRIPE_WEBHOOK_SECRET=whsec_local_development_secret
TWILIO_TOKEN=local-twilio-auth-token

# realm_secret CLIENT_ID: the dev secret of a client of the local realm (test/infra/keycloak/realm.json).
realm_secret() {
  node -e 'const r=require(process.argv[1]);const c=r.clients.find((x)=>x.clientId===process.argv[2]);process.stdout.write(c.secret)' \
    "$ROOT/test/infra/keycloak/realm.json" "$1"
}

# service_env NAME: prints the VAR=value settings of a service for a local run, one a line.
service_env() {
  case "$1" in
    cache) printf '%s\n' Cache__Backend=memory Cache__Host=127.0.0.1 ;;
    graph-registry) printf '%s\n' "STORE_URL=$(env_get REDIS_URL)" MONITOR_API_KEY=local-dev-key Registry__Host=127.0.0.1 ;;
    auth)
      printf '%s\n' NODE_ENV=Development Auth__Host=127.0.0.1 Auth__PublicBaseUrl=https://localhost:5555 \
        Auth__AllowedRedirectUris=https://localhost:5555,http://localhost:3000 \
        Oidc__Realm="$(env_get KEYCLOAK_REALM)" Oidc__ServerUrl="$(env_get KEYCLOAK_URL)" \
        Oidc__ClientId=platform-auth Oidc__ClientSecret="$(realm_secret platform-auth)" \
        Oidc__AdminCredentials__Username="$(env_get KEYCLOAK_ADMIN_USERNAME)" Oidc__AdminCredentials__Password="$(env_get KEYCLOAK_ADMIN_PASSWORD)" \
        MessageBroker__BrokerList="$(env_get KAFKA_BROKERS)" Cache__Url=127.0.0.1:7777
      ;;
    webhooks)
      printf '%s\n' Webhooks__Host=127.0.0.1 Webhooks__PublicBaseUrl=http://127.0.0.1:5000 \
        WEBHOOKS_API_KEY=$WEBHOOKS_KEY PAYMENT_PROVIDER_API_KEY=sk_test_local PAYMENT_PROVIDER_API_URL="$(env_get STRIPE_MOCK_URL)" \
        PAYMENT_PROVIDER_WEBHOOKS_SECRET=$STRIPE_WEBHOOK_SECRET \
        SMS_PROVIDER_ACCOUNT_SID=AC00000000000000000000000000000000 SMS_PROVIDER_AUTH_TOKEN=$TWILIO_TOKEN \
        GRAPHQL_API_URL=http://127.0.0.1:$GATEWAY_PORT/graphql LOCALIZATION_API_URL=http://127.0.0.1:$LOCALIZATION_PORT \
        STORE_URL="$(env_get REDIS_URL)" Cache__Url=127.0.0.1:7777 MessageBroker__BrokerList="$(env_get KAFKA_BROKERS)" \
        Oidc__Realm="$(env_get KEYCLOAK_REALM)" Oidc__ServerUrl="$(env_get KEYCLOAK_URL)" \
        Oidc__ClientId="$(env_get KEYCLOAK_SERVICES_CLIENT_ID)" Oidc__ClientSecret="$(env_get KEYCLOAK_SERVICES_CLIENT_SECRET)" \
        AccountUrl=http://localhost:3000/account BillingPortalUrl=http://localhost:3000/billing ClientLinkBaseUri=http://localhost:3000/c
      ;;
    *) die "unknown service $1" ;;
  esac
}

service_up() {
  local name=$1 management_port=$2 settings
  if is_running "$name"; then
    log "$name already running"
    return 0
  fi
  mapfile -t settings < <(service_env "$name")
  (cd "$ROOT" && start_bg "$name" env "${settings[@]}" "Management__Port=$management_port" npm start --silent -w "services/$name")
  local i
  for ((i = 0; i < 180; i++)); do
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$management_port/readyz" 2>/dev/null && return 0
    is_running "$name" || { tail -n 5 "$RUN/$name.log" >&2; die "$name exited during start (log: $RUN/$name.log)"; }
    sleep 0.5
  done
  die "$name was not ready within 90s (log: $RUN/$name.log; readiness: $(curl -s "http://127.0.0.1:$management_port/readyz"))"
}

fixtures_up() {
  if is_running fixtures; then return 0; fi
  (cd "$ROOT" && start_bg fixtures env LOCAL_GATEWAY_PORT=$GATEWAY_PORT LOCAL_LOCALIZATION_PORT=$LOCALIZATION_PORT npx tsx scripts/local-fixtures.ts)
  wait_for_port fixtures $GATEWAY_PORT 30
  wait_for_port fixtures $LOCALIZATION_PORT 30
}

up() {
  bash "$ROOT/test/infra/infra.sh" up
  fixtures_up
  local entry
  for entry in "${SERVICES[@]}"; do service_up "${entry%%|*}" "${entry##*|}"; done
  print_table
}

down() {
  local i entry
  for ((i = ${#SERVICES[@]} - 1; i >= 0; i--)); do
    entry=${SERVICES[$i]}
    stop_bg "${entry%%|*}"
  done
  stop_bg fixtures
  bash "$ROOT/test/infra/infra.sh" down
}

print_table() {
  printf '\n%-16s %s\n' "COMPONENT" "ADDRESS"
  printf '%-16s %s\n' cache "127.0.0.1:7777 (gRPC; metrics http://127.0.0.1:9464/metrics)"
  printf '%-16s %s\n' graph-registry "http://127.0.0.1:5145 (X-Api-Key: local-dev-key; metrics http://127.0.0.1:9465/metrics)"
  printf '%-16s %s\n' auth "https://localhost:5555 (self-signed; metrics http://127.0.0.1:9466/metrics)"
  printf '%-16s %s\n' webhooks "http://127.0.0.1:5000/api/PaymentProviderWebhookHandler?code=$WEBHOOKS_KEY (Stripe secret $STRIPE_WEBHOOK_SECRET), .../api/SmsProviderWebhookHandler?code=$WEBHOOKS_KEY (Twilio token $TWILIO_TOKEN)"
  printf '%-16s %s\n' gateway "http://127.0.0.1:$GATEWAY_PORT/graphql (fixture: client #1 +15550000001, subscribers +15550000002 de, +15550000003 fr)"
  printf '%-16s %s\n' localization "http://127.0.0.1:$LOCALIZATION_PORT (fixture)"
  printf '%-16s %s\n' redis "$(env_get REDIS_URL)" kafka "$(env_get KAFKA_BROKERS)" \
    keycloak "$(env_get KEYCLOAK_URL) (admin console: $(env_get KEYCLOAK_MASTER_ADMIN_USERNAME) / $(env_get KEYCLOAK_MASTER_ADMIN_PASSWORD))" \
    stripe-mock "$(env_get STRIPE_MOCK_URL)"
  printf '\nLogs: .cache/run/<component>.log   Stop: make down\n'
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) die "usage: $0 up|down" ;;
esac
