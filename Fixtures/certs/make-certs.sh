#!/usr/bin/env bash
# Generates the TLS test certificates in this folder with the `openssl` CLI (Debian package
# `openssl`; scripts/setup.sh installs it). Re-run to regenerate everything; commit the outputs.
#
# Keys are EC P-256 (fast to make, fast to handshake). "Valid" certificates last 100 years.
# Expired / not-yet-valid leaves are issued with `openssl ca -startdate/-enddate` (OpenSSL 3.0's
# `x509` has no -not_before/-not_after and `-days` must be positive; no faketime needed).
#
# Outputs (PEM):
#   ca.pem / ca.key                         test root CA ("Bluebonnet Test Root CA")
#   intermediate.pem / intermediate.key     intermediate CA, signed by the root
#   localhost.pem / localhost.key           leaf: DNS localhost, IP 127.0.0.1, IP ::1 (by the intermediate).
#                                           Served alone it is the "missing intermediate" case.
#   localhost-chain.pem                     localhost.pem + intermediate.pem (what a server should send)
#   expired{.pem,.key,-chain.pem}           leaf for localhost, valid 2000-01-01 .. 2001-01-01
#   notyetvalid{.pem,.key,-chain.pem}       leaf for localhost, valid 2100-01-01 .. 2200-01-01
#   wronghost{.pem,.key,-chain.pem}         leaf for DNS wrong.example only
#   wildcard{.pem,.key,-chain.pem}          leaf for DNS *.localtest.bluebonnet
#   iponly{.pem,.key,-chain.pem}            leaf with IP SANs 127.0.0.1 and ::1 only (no DNS SAN)
#   cnonly{.pem,.key,-chain.pem}            leaf with CN=localhost and no subjectAltName (never matches)
#   selfsigned.pem / selfsigned.key         self-signed leaf for localhost (CA:FALSE)
#   unknownca.pem / unknownca.key           a root CA nobody trusts
#   unknownca-leaf{.pem,.key}               leaf for localhost signed by unknownca
#   unknownca-chain.pem                     unknownca-leaf.pem + unknownca.pem
#   client.pem / client.key                 client certificate (EKU clientAuth) signed by the root, for mTLS
#   ca.der                                  ca.pem in DER (for the DER trust-root tests)
set -euo pipefail
cd "$(dirname "$0")"
OUT="$PWD"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
DAYS=36500

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

cat > "$WORK/ca.cnf" <<'CNF'
[ ca ]
default_ca = test_ca
[ test_ca ]
dir = $ENV::CADIR
database = $dir/index.txt
new_certs_dir = $dir/new
serial = $dir/serial
default_md = sha256
policy = policy_any
unique_subject = no
copy_extensions = none
email_in_dn = no
[ policy_any ]
commonName = supplied
organizationName = optional
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ v3_root ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ v3_intermediate ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ v3_server ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = $ENV::SAN
[ v3_server_no_san ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ v3_selfsigned ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
subjectAltName = $ENV::SAN
[ v3_client ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
CNF
export SAN="DNS:unused"

# A signing CA directory for `openssl ca`: $1 name, $2 cert, $3 key.
new_ca_dir() {
  mkdir -p "$WORK/$1/new"
  : > "$WORK/$1/index.txt"
  printf '1000\n' > "$WORK/$1/serial"
}

# sign CA_NAME CA_CERT CA_KEY CSR OUT EXTENSIONS [date options...]
sign() {
  local caname="$1" cacert="$2" cakey="$3" csr="$4" out="$5" ext="$6"; shift 6
  CADIR="$WORK/$caname" openssl ca -batch -notext -config "$WORK/ca.cnf" -cert "$cacert" -keyfile "$cakey" \
    -in "$csr" -out "$out" -extensions "$ext" "$@" 2>/dev/null
}

csr() { # csr KEY CN OUT
  openssl req -new -key "$1" -subj "/O=Bluebonnet Tests/CN=$2" -out "$3"
}

# Root CA (self-signed) and the untrusted "unknown" root.
for root in ca unknownca; do
  key "$OUT/$root.key"
  name="Bluebonnet Test Root CA"; [ "$root" = unknownca ] && name="Bluebonnet Unknown Root CA"
  CADIR="$WORK" openssl req -x509 -new -key "$OUT/$root.key" -subj "/O=Bluebonnet Tests/CN=$name" \
    -days "$DAYS" -sha256 -config "$WORK/ca.cnf" -extensions v3_root -out "$OUT/$root.pem"
  new_ca_dir "$root"
done
openssl x509 -in "$OUT/ca.pem" -outform DER -out "$OUT/ca.der"

# Intermediate CA, signed by the root.
key "$OUT/intermediate.key"
csr "$OUT/intermediate.key" "Bluebonnet Test Intermediate CA" "$WORK/intermediate.csr"
sign ca "$OUT/ca.pem" "$OUT/ca.key" "$WORK/intermediate.csr" "$OUT/intermediate.pem" v3_intermediate -days "$DAYS"
new_ca_dir intermediate

# leaf NAME CN SAN [date options...]: a server leaf signed by the intermediate, plus NAME-chain.pem.
leaf() {
  local name="$1" cn="$2"; export SAN="$3"; shift 3
  key "$OUT/$name.key"
  csr "$OUT/$name.key" "$cn" "$WORK/$name.csr"
  sign intermediate "$OUT/intermediate.pem" "$OUT/intermediate.key" "$WORK/$name.csr" "$OUT/$name.pem" v3_server "$@"
  cat "$OUT/$name.pem" "$OUT/intermediate.pem" > "$OUT/$name-chain.pem"
}

leaf localhost   localhost            "DNS:localhost,IP:127.0.0.1,IP:::1" -days "$DAYS"
leaf expired     localhost            "DNS:localhost,IP:127.0.0.1,IP:::1" -startdate 20000101000000Z -enddate 20010101000000Z
leaf notyetvalid localhost            "DNS:localhost,IP:127.0.0.1,IP:::1" -startdate 21000101000000Z -enddate 22000101000000Z
leaf wronghost   wrong.example        "DNS:wrong.example" -days "$DAYS"
leaf wildcard    "*.localtest.bluebonnet" "DNS:*.localtest.bluebonnet" -days "$DAYS"
leaf iponly      127.0.0.1            "IP:127.0.0.1,IP:::1" -days "$DAYS"

# Leaf naming localhost only in its subject CN (no subjectAltName): RFC 9525 says no match.
key "$OUT/cnonly.key"
csr "$OUT/cnonly.key" localhost "$WORK/cnonly.csr"
sign intermediate "$OUT/intermediate.pem" "$OUT/intermediate.key" "$WORK/cnonly.csr" "$OUT/cnonly.pem" v3_server_no_san -days "$DAYS"
cat "$OUT/cnonly.pem" "$OUT/intermediate.pem" > "$OUT/cnonly-chain.pem"

# Self-signed leaf for localhost.
key "$OUT/selfsigned.key"
SAN="DNS:localhost,IP:127.0.0.1,IP:::1" CADIR="$WORK" openssl req -x509 -new -key "$OUT/selfsigned.key" \
  -subj "/O=Bluebonnet Tests/CN=localhost" -days "$DAYS" -sha256 -config "$WORK/ca.cnf" \
  -extensions v3_selfsigned -out "$OUT/selfsigned.pem"

# Leaf from the unknown CA (served with its root, so verification stops at an untrusted root).
key "$OUT/unknownca-leaf.key"
csr "$OUT/unknownca-leaf.key" localhost "$WORK/unknownca-leaf.csr"
SAN="DNS:localhost,IP:127.0.0.1,IP:::1" sign unknownca "$OUT/unknownca.pem" "$OUT/unknownca.key" \
  "$WORK/unknownca-leaf.csr" "$OUT/unknownca-leaf.pem" v3_server -days "$DAYS"
cat "$OUT/unknownca-leaf.pem" "$OUT/unknownca.pem" > "$OUT/unknownca-chain.pem"

# Client certificate for mTLS, signed by the root.
key "$OUT/client.key"
csr "$OUT/client.key" "Bluebonnet Test Client" "$WORK/client.csr"
sign ca "$OUT/ca.pem" "$OUT/ca.key" "$WORK/client.csr" "$OUT/client.pem" v3_client -days "$DAYS"

echo "make-certs: wrote $(ls "$OUT"/*.pem | wc -l) PEM files to $OUT"
