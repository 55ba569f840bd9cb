#!/usr/bin/env bash
# The local certificate authority of `make up` and the tests, as mkcert keeps one for a developer's
# machine: a CA created once (EC P-256, 10 years) in .cache/local-ca, which Keycloak trusts
# (keycloak.sh start: --truststore-paths) and which signs the auth service's server certificate.
# Keycloak then reaches the auth service's back-channel logout endpoint over verified TLS, as it
# would in a deployment, and so can a browser or curl told to trust the CA
# (curl --cacert .cache/local-ca/ca.crt https://localhost:5555/...).
#
#   test/infra/local-ca.sh ca                  create the CA unless it exists; prints its certificate's path
#   test/infra/local-ca.sh issue DIR NAME...   a server certificate for the names (host names and IP
#                                              addresses; EC P-256, 397 days) signed by the CA: DIR/tls.crt
#                                              and DIR/tls.key (mode 600)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CA_DIR="$CACHE/local-ca"
CA_CERT="$CA_DIR/ca.crt"
CA_KEY="$CA_DIR/ca.key"

ensure_ca() {
  mkdir -p "$CA_DIR"
  (
    # Keycloak and the tests may ask at once: one creates it, the others find it.
    flock 9
    [ -s "$CA_CERT" ] && [ -s "$CA_KEY" ] && exit 0
    umask 077
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 \
      -keyout "$CA_KEY.tmp" -out "$CA_CERT.tmp" -subj "/O=subscription-platform development/CN=subscription-platform local CA ($(hostname))" \
      -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -addext "subjectKeyIdentifier=hash" 2> "$CA_DIR/openssl.log" || { cat "$CA_DIR/openssl.log" >&2; die "creating the local CA failed"; }
    chmod 644 "$CA_CERT.tmp"
    mv "$CA_KEY.tmp" "$CA_KEY"
    mv "$CA_CERT.tmp" "$CA_CERT"
    rm -f "$CA_DIR/openssl.log"
    log "local CA created: $CA_CERT"
  ) 9> "$CA_DIR.lock"
}

# san NAME...: the subjectAltName value for host names and IP addresses.
san() {
  local name out=""
  for name in "$@"; do
    if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then out+="${out:+,}IP:$name"; else out+="${out:+,}DNS:$name"; fi
  done
  printf '%s' "$out"
}

issue() {
  local dir=$1 tmp
  shift
  [ -n "$dir" ] && [ $# -gt 0 ] || die "usage: $0 issue DIR NAME..."
  ensure_ca
  mkdir -p "$dir"
  tmp=$(mktemp -d "$dir/.issue-XXXXXX")
  (
    umask 077
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/tls.key" -out "$tmp/tls.csr" -subj "/CN=$1" 2> "$tmp/openssl.log" &&
      printf '%s\n' "subjectAltName=$(san "$@")" "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
        "extendedKeyUsage=serverAuth" "authorityKeyIdentifier=keyid" "subjectKeyIdentifier=hash" > "$tmp/ext.cnf" &&
      openssl x509 -req -sha256 -days 397 -in "$tmp/tls.csr" -CA "$CA_CERT" -CAkey "$CA_KEY" -set_serial "0x$(openssl rand -hex 16)" \
        -extfile "$tmp/ext.cnf" -out "$tmp/leaf.crt" 2>> "$tmp/openssl.log"
  ) || { cat "$tmp/openssl.log" >&2; rm -rf "$tmp"; die "issuing a certificate for $* failed"; }
  chmod 644 "$tmp/leaf.crt"
  mv "$tmp/tls.key" "$dir/tls.key"
  mv "$tmp/leaf.crt" "$dir/tls.crt"
  rm -rf "$tmp"
}

case "${1:-}" in
  ca) ensure_ca; printf '%s\n' "$CA_CERT" ;;
  issue) shift; issue "$@" ;;
  *) echo "usage: $0 ca | issue DIR NAME..." >&2; exit 2 ;;
esac
