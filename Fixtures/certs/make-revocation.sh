#!/usr/bin/env bash
# Revocation fixtures, made from the intermediate CA of ./make-certs.sh (run that first; this
# script rewrites only the files below, so the other certificates keep their bytes):
#
#   revoked.pem/.key          leaf for localhost, revoked by the intermediate
#   unlisted.pem/.key         leaf for localhost the intermediate's records do not know (OCSP "unknown")
#   ocsp-signer.pem/.key      the intermediate's delegated OCSP responder (extendedKeyUsage OCSPSigning)
#   intermediate.crl          the intermediate's CRL (PEM), listing revoked.pem
#   ocsp-good.der             OCSP response: localhost.pem is good
#   ocsp-revoked.der          OCSP response: revoked.pem is revoked
#   ocsp-unknown.der          OCSP response: unlisted.pem is unknown
#
# Everything lasts 100 years (CRL nextUpdate and OCSP nextUpdate included).
set -euo pipefail
cd "$(dirname "$0")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
DAYS=36500

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

mkdir -p "$WORK/new"
: > "$WORK/index.txt"
printf '2000\n' > "$WORK/serial"
printf '2000\n' > "$WORK/crlnumber"
cat > "$WORK/ca.cnf" <<'CNF'
[ ca ]
default_ca = intermediate
[ intermediate ]
dir = $ENV::CADIR
database = $dir/index.txt
new_certs_dir = $dir/new
serial = $dir/serial
crlnumber = $dir/crlnumber
default_md = sha256
default_crl_days = 36500
policy = policy_any
unique_subject = no
copy_extensions = none
[ policy_any ]
commonName = supplied
organizationName = optional
[ v3_server ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
subjectAltName = DNS:localhost,IP:127.0.0.1,IP:::1
[ v3_ocsp ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = OCSPSigning
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
CNF
export CADIR="$WORK"
ca() { openssl ca -batch -notext -config "$WORK/ca.cnf" -cert intermediate.pem -keyfile intermediate.key "$@" 2>/dev/null; }

for name in revoked ocsp-signer; do
  key "$name.key"
  openssl req -new -key "$name.key" -subj "/O=Bluebonnet Tests/CN=${name/revoked/localhost}" -out "$WORK/$name.csr"
  ext=v3_server; [ "$name" = ocsp-signer ] && ext=v3_ocsp
  ca -in "$WORK/$name.csr" -out "$name.pem" -extensions "$ext" -days "$DAYS"
done
# Not through `openssl ca`, so the index does not list it.
key unlisted.key
openssl req -new -key unlisted.key -subj "/O=Bluebonnet Tests/CN=localhost" -out "$WORK/unlisted.csr"
openssl x509 -req -in "$WORK/unlisted.csr" -CA intermediate.pem -CAkey intermediate.key -set_serial 0x3000 \
  -days "$DAYS" -sha256 -extfile "$WORK/ca.cnf" -extensions v3_server -out unlisted.pem 2>/dev/null

ca -valid localhost.pem
ca -revoke revoked.pem -crl_reason keyCompromise
ca -gencrl -out intermediate.crl

for pair in good:localhost revoked:revoked unknown:unlisted; do
  status="${pair%%:*}"; cert="${pair##*:}"
  openssl ocsp -issuer intermediate.pem -cert "$cert.pem" -no_nonce -reqout "$WORK/$status.req" 2>/dev/null
  openssl ocsp -index "$WORK/index.txt" -rsigner ocsp-signer.pem -rkey ocsp-signer.key -CA intermediate.pem \
    -reqin "$WORK/$status.req" -respout "ocsp-$status.der" -ndays "$DAYS" 2>/dev/null
done
echo "make-revocation: wrote revoked.pem, unlisted.pem, ocsp-signer.pem, intermediate.crl, ocsp-{good,revoked,unknown}.der"
