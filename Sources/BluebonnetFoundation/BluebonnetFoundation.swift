// The opt-in module for seed-era APIs that need full Foundation: `Any`-based JSON and
// property-list encodings and response serializers. Importing it imports `Bluebonnet` too. The core module links no
// libFoundation.so; only programs that import this one do.
@_exported import Bluebonnet
