// libFuzzer's driver, callable from a program that has its own `main`.
//
// Why: SwiftPM links every executable with `--defsym main=<Module>_main` (so executables can be
// tested), so libFuzzer's own `main` is never used and `-parse-as-library` fails to link. Each fuzz
// target therefore has an `@main` that hands `argc`/`argv` to this function (libFuzzer >= LLVM 12).
#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command line `argc`/`argv`, calling `callback` for each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
