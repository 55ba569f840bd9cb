#!/usr/bin/env bash
# `make up` / `make down`: the local dependencies plus every service, with local defaults.
#   bash scripts/platform.sh up     start (safe to run twice), wait until ready, print a table
#   bash scripts/platform.sh down   stop everything
#   bash scripts/platform.sh env NAME   the settings `up` gives service NAME, VAR=value a line (e.g. to
#                                       run a second replica beside it: docs/development.md)
# Each service runs from its build (npm start -w services/<name>), logs to .cache/run/<name>.log.
source "$(dirname "$0")/../test/infra/lib.sh"

# Components: name|management port, all started side by side (up). Each service gets its settings
# from service_env; the gateway (Hive Gateway, not a service of this project) is started by
# gateway_up once the controller has published the subgraphs and the registry has composed them;
# the webhooks service, whose readiness asks it, is ready after it.
# Fixed local ports, development secrets and links: one source (scripts/local-platform.ts) for
# this script, `make demo` and the end-to-end tests.
eval "$(node "$ROOT/scripts/local-platform.ts")"

SERVICES=("cache|$LOCAL_CACHE_MANAGEMENT_PORT" "graph-registry|$LOCAL_REGISTRY_MANAGEMENT_PORT" "graph-controller|$LOCAL_CONTROLLER_MANAGEMENT_PORT" "auth|$LOCAL_AUTH_MANAGEMENT_PORT" "gateway|$LOCAL_GATEWAY_PORT" "webhooks|$LOCAL_WEBHOOKS_MANAGEMENT_PORT")
CDN_ENDPOINT="http://127.0.0.1:$LOCAL_REGISTRY_PORT/artifacts/v1/$LOCAL_CDN_TARGET"

# realm_secret CLIENT_ID: the dev secret of a client of the local realm (test/infra/keycloak/realm.json).
realm_secret() {
  node -e 'const r=require(process.argv[1]);const c=r.clients.find((x)=>x.clientId===process.argv[2]);process.stdout.write(c.secret)' \
    "$ROOT/test/infra/keycloak/realm.json" "$1"
}

# allocator_env: the allocator the images run every service with (jemalloc, Debian's package:
# the Dockerfile says why), as VAR=value lines read from the Dockerfile, so a local service
# measures and behaves as the deployed one.
allocator_env() {
  install_allocator
  sed -n 's/^ENV \(LD_PRELOAD=.*\|MALLOC_CONF=.*\)$/\1/p' "$ROOT/Dockerfile"
}

# service_env NAME: prints the VAR=value settings of a service for a local run, one a line.
service_env() {
  case "$1" in cache | graph-registry | auth | webhooks | graph-controller) allocator_env ;; esac
  case "$1" in
    cache) printf '%s\n' Cache__Backend=memory Cache__Host=127.0.0.1 Cache__Port=$LOCAL_CACHE_PORT Cache__Capacity=$LOCAL_CACHE_CAPACITY Cache__Partitions=$LOCAL_CACHE_PARTITIONS ;;
    graph-registry)
      printf '%s\n' "STORE_URL=$(env_get REDIS_URL)" MONITOR_API_KEY=$LOCAL_REGISTRY_KEY Registry__Host=127.0.0.1 Registry__Port=$LOCAL_REGISTRY_PORT \
        Registry__CdnKeys=$LOCAL_REGISTRY_CDN_KEY Registry__CdnTarget=$LOCAL_CDN_TARGET
      ;;
    auth)
      printf '%s\n' NODE_ENV=Development Auth__Host=127.0.0.1 Auth__Port=$LOCAL_AUTH_PORT Auth__PublicBaseUrl=$LOCAL_AUTH_URL \
        Auth__AllowedRedirectUris=$LOCAL_AUTH_URL,http://localhost:3000 \
        Oidc__Realm="$(env_get KEYCLOAK_REALM)" Oidc__ServerUrl="$(env_get KEYCLOAK_URL)" \
        Oidc__ClientId=platform-auth Oidc__ClientSecret="$(realm_secret platform-auth)" \
        Oidc__AdminCredentials__Username="$(env_get KEYCLOAK_ADMIN_USERNAME)" Oidc__AdminCredentials__Password="$(env_get KEYCLOAK_ADMIN_PASSWORD)" \
        MessageBroker__BrokerList="$(env_get KAFKA_BROKERS)" Cache__Url=127.0.0.1:$LOCAL_CACHE_PORT \
        Tls__CertPath="$AUTH_TLS/tls.crt" Tls__KeyPath="$AUTH_TLS/tls.key"
      ;;
    webhooks)
      printf '%s\n' Webhooks__Host=127.0.0.1 Webhooks__Port=$LOCAL_WEBHOOKS_PORT Webhooks__PublicBaseUrl=$LOCAL_WEBHOOKS_PUBLIC_URL \
        WEBHOOKS_API_KEY=$LOCAL_WEBHOOKS_KEY PAYMENT_PROVIDER_API_KEY=$LOCAL_STRIPE_API_KEY PAYMENT_PROVIDER_API_URL="$(env_get STRIPE_MOCK_URL)" \
        PAYMENT_PROVIDER_WEBHOOKS_SECRET=$LOCAL_STRIPE_WEBHOOK_SECRET \
        SMS_PROVIDER_ACCOUNT_SID=$LOCAL_TWILIO_ACCOUNT_SID SMS_PROVIDER_AUTH_TOKEN=$LOCAL_TWILIO_TOKEN \
        GRAPHQL_API_URL=http://127.0.0.1:$LOCAL_GATEWAY_PORT/graphql LOCALIZATION_API_URL=http://127.0.0.1:$LOCAL_LOCALIZATION_PORT \
        STORE_URL="$(env_get REDIS_URL)" Cache__Url=127.0.0.1:$LOCAL_CACHE_PORT MessageBroker__BrokerList="$(env_get KAFKA_BROKERS)" \
        Oidc__Realm="$(env_get KEYCLOAK_REALM)" Oidc__ServerUrl="$(env_get KEYCLOAK_URL)" \
        Oidc__ClientId="$(env_get KEYCLOAK_SERVICES_CLIENT_ID)" Oidc__ClientSecret="$(env_get KEYCLOAK_SERVICES_CLIENT_SECRET)" \
        AccountUrl=$LOCAL_ACCOUNT_URL BillingPortalUrl=$LOCAL_BILLING_PORTAL_URL ClientLinkBaseUri=$LOCAL_CLIENT_BASE_URL
      ;;
    graph-controller)
      printf '%s\n' Registry__Url=http://127.0.0.1:$LOCAL_REGISTRY_PORT Registry__ApiKey=$LOCAL_REGISTRY_KEY \
        KUBECONFIG="$(env_get KUBECONFIG_PATH)" Controller__Namespaces=$LOCAL_KUBE_NAMESPACE Controller__LeaseNamespace=$LOCAL_KUBE_NAMESPACE \
        POD_NAME=graph-controller-local
      ;;
    # Hive Gateway's settings (gateway/gateway.config.mjs reads the rest).
    gateway)
      printf '%s\n' HIVE_CDN_ENDPOINT=$CDN_ENDPOINT HIVE_CDN_KEY=$LOCAL_REGISTRY_CDN_KEY POLLING=$LOCAL_GATEWAY_POLLING PORT=$LOCAL_GATEWAY_PORT HOST=127.0.0.1
      ;;
    *) die "unknown service $1" ;;
  esac
}

# The auth service's certificate, signed by the local CA that Keycloak trusts (test/infra/local-ca.sh,
# keycloak.sh start), so Keycloak posts back-channel Logout Tokens to https://localhost:5555 over
# verified TLS. Issued again at every `up` (the key never leaves .cache/run).
AUTH_TLS="$RUN/auth-tls"
auth_certificate() {
  bash "$ROOT/test/infra/local-ca.sh" issue "$AUTH_TLS" localhost 127.0.0.1 ::1
}

service_up() {
  local name=$1 management_port=$2 settings
  [ "$name" != gateway ] || { gateway_up; return; }
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

# The namespace the local graph controller watches, with the example annotated Service in it and
# the Services that announce the three subgraph fixtures (graph-registry.io/federation, their
# loopback URLs in graph-registry.io/url: scripts/local-platform.ts); server-side apply through the
# Kubernetes client (scripts/local-kube.ts; no kubectl: `make up` builds only what it runs),
# unchanged on a second `make up`. The kube-apiserver runs no controllers, so nothing deletes
# them; `make down` stops the apiserver and drops its data.
example_service_up() {
  (cd "$ROOT" && npx tsx scripts/local-kube.ts) || die "could not apply the local namespace and Services to $(env_get KUBE_APISERVER_URL)"
}

# True once the registry's CDN serves a supergraph composed of N subgraphs (its `services` artifact).
supergraph_of() {
  curl -fsS --max-time 2 -H "X-Hive-CDN-Key: $LOCAL_REGISTRY_CDN_KEY" "$CDN_ENDPOINT/services" |
    node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>process.exit(JSON.parse(s).length>=Number(process.argv[1])?0:1))' "$1"
}

# Hive Gateway (gateway/, `npm ci` by infra.sh's hive-gateway step) reading the supergraph from the
# registry's CDN paths. It exits when there is none yet (as against Hive's own CDN), so it starts
# once the controller has published the three subgraphs' schemas and the registry composed them.
gateway_up() {
  local settings subgraphs
  if is_running gateway; then
    log "gateway already running"
    return 0
  fi
  subgraphs=$(tr ',' '\n' <<< "$LOCAL_SUBGRAPH_PORTS" | wc -l)
  wait_until - 90 supergraph_of "$subgraphs" ||
    die "the registry has no supergraph of the $subgraphs subgraphs after 90s: the graph controller publishes their schemas (its log: $RUN/graph-controller.log)"
  mapfile -t settings < <(service_env gateway)
  (cd "$ROOT/gateway" && start_bg gateway env "${settings[@]}" node node_modules/@graphql-hive/gateway/dist/bin.js supergraph --config-path gateway.config.mjs)
  wait_until gateway 60 http_ok "http://127.0.0.1:$LOCAL_GATEWAY_PORT/readiness" || {
    tail -n 5 "$RUN/gateway.log" >&2
    die "Hive Gateway was not ready within 60s (log: $RUN/gateway.log)"
  }
}

fixtures_up() {
  if is_running fixtures; then return 0; fi
  (cd "$ROOT" && start_bg fixtures npx tsx scripts/local-fixtures.ts)
  local port
  for port in ${LOCAL_SUBGRAPH_PORTS//,/ } "$LOCAL_LOCALIZATION_PORT"; do wait_for_port fixtures "$port" 30; done
}

# Each service starts beside the others: a service answers /readyz once what it needs answers
# (auth the cache, the webhooks the gateway), so none has to wait for another's start to begin its
# own, and the slowest start decides how long `make up` takes.
up() {
  bash "$ROOT/test/infra/infra.sh" up
  is_running auth || auth_certificate
  local pids=() names=() failed=() entry i
  for entry in fixtures "local-kube|" "${SERVICES[@]}"; do
    case "$entry" in
      fixtures) fixtures_up & ;;
      local-kube*) example_service_up & ;;
      *) service_up "${entry%%|*}" "${entry##*|}" & ;;
    esac
    pids+=($!)
    names+=("${entry%%|*}")
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
  [ ${#failed[@]} -eq 0 ] || die "could not start: ${failed[*]} (logs in $RUN)"
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
  printf '%-16s %s\n' cache "127.0.0.1:$LOCAL_CACHE_PORT (gRPC; metrics http://127.0.0.1:$LOCAL_CACHE_MANAGEMENT_PORT/metrics)"
  printf '%-16s %s\n' graph-registry "http://127.0.0.1:$LOCAL_REGISTRY_PORT (X-Api-Key: $LOCAL_REGISTRY_KEY; supergraph $CDN_ENDPOINT/supergraph, X-Hive-CDN-Key: $LOCAL_REGISTRY_CDN_KEY; metrics http://127.0.0.1:$LOCAL_REGISTRY_MANAGEMENT_PORT/metrics)"
  printf '%-16s %s\n' auth "$LOCAL_AUTH_URL (certificate of the local CA $(env_get KEYCLOAK_TRUSTED_CA), which Keycloak trusts; metrics http://127.0.0.1:$LOCAL_AUTH_MANAGEMENT_PORT/metrics)"
  printf '%-16s %s\n' webhooks "$LOCAL_WEBHOOKS_PUBLIC_URL/api/PaymentProviderWebhookHandler?code=$LOCAL_WEBHOOKS_KEY (Stripe secret $LOCAL_STRIPE_WEBHOOK_SECRET), .../api/SmsProviderWebhookHandler?code=$LOCAL_WEBHOOKS_KEY (Twilio token $LOCAL_TWILIO_TOKEN)"
  printf '%-16s %s\n' graph-controller "watches namespace $LOCAL_KUBE_NAMESPACE of $(env_get KUBE_APISERVER_URL) (example Service orders-graphql → graph orders; federated Services user-graphql, product-graphql, payment-graphql → subgraphs; metrics http://127.0.0.1:$LOCAL_CONTROLLER_MANAGEMENT_PORT/metrics)"
  printf '%-16s %s\n' gateway "http://127.0.0.1:$LOCAL_GATEWAY_PORT/graphql (Hive Gateway on the registry's supergraph, polled every $LOCAL_GATEWAY_POLLING)"
  printf '%-16s %s\n' subgraphs "user, product, payment on http://127.0.0.1:{${LOCAL_SUBGRAPH_PORTS}}/graphql (fixtures: client #1 +15550000001, subscribers +15550000002 de, +15550000003 fr; operations received: /_operations)"
  printf '%-16s %s\n' localization "http://127.0.0.1:$LOCAL_LOCALIZATION_PORT (fixture)"
  printf '%-16s %s\n' redis "$(env_get REDIS_URL)" kafka "$(env_get KAFKA_BROKERS)" \
    keycloak "$(env_get KEYCLOAK_URL) (admin console: $(env_get KEYCLOAK_MASTER_ADMIN_USERNAME) / $(env_get KEYCLOAK_MASTER_ADMIN_PASSWORD))" \
    stripe-mock "$(env_get STRIPE_MOCK_URL)"
  printf '\nDemo client (browser login, group clients): demo-client / demo-client-password\n'
  printf '  open %s/login?redirectUri=%s/auth in a browser (trust the local CA, or accept its certificate)\n' "$LOCAL_AUTH_URL" "$LOCAL_AUTH_URL"
  printf 'OTP login: POST %s/otp {"phoneNumber":"+4915123456789"} answers the code (Development mode)\n' "$LOCAL_AUTH_URL"
  printf 'Walk through everything: make demo\n'
  printf '\nLogs: .cache/run/<component>.log   Stop: make down\n'
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) [ -n "${2:-}" ] || die "usage: $0 env NAME"; service_env "$2" ;;
  *) die "usage: $0 up|down|env NAME" ;;
esac
