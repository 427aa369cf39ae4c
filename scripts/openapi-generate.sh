#!/usr/bin/env bash
# Remakes the OpenAPI test client, Tests/BluebonnetOpenAPITests/Generated/, from
# Tests/BluebonnetOpenAPITests/OpenAPI/openapi.yaml and openapi-generator-config.yaml with
# swift-openapi-generator (pinned below). Run it after changing either file, and commit the result.
#
# The generated Swift is committed rather than made by the generator's build plugin: the plugin
# would add the generator and its dependencies (OpenAPIKit, Yams, swift-algorithms) to every build
# of this package, minutes on a 2-core machine, for code that changes only with the document.
# The generator is built once into a scratch package (kept for next time) outside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.14.3
tests=Tests/BluebonnetOpenAPITests
work=${OPENAPI_GENERATOR_WORK:-${TMPDIR:-/tmp}/bluebonnet-openapi-generator-$version}

mkdir -p "$work"
cat > "$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription
let package = Package(
    name: "openapi-generator-runner",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "$version")]
)
MANIFEST

echo "== building swift-openapi-generator $version in $work"
swift build --package-path "$work" --product swift-openapi-generator
generator="$(swift build --package-path "$work" --show-bin-path)/swift-openapi-generator"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$generator" generate \
  --config "$tests/OpenAPI/openapi-generator-config.yaml" \
  --output-directory "$out" \
  "$tests/OpenAPI/openapi.yaml"

rm -rf "$tests/Generated"
mkdir -p "$tests/Generated"
cp "$out"/*.swift "$tests/Generated/"
echo "== wrote $(ls "$tests/Generated" | wc -l) files to $tests/Generated"
